/**
 * Template placeholders (docs/decisions.md, "False entities"): names a template leaves for its
 * user to fill (`SERVICE_NAME`, `<your-app>`, `REPLACE_ME`, `{{ .Values.name }}`, `${APP}`)
 * name nothing that runs. Judged on the normalized name (analysis/evidence.ts normalizeName),
 * so the template syntax is already gone: the words are what is left.
 */
const PLACEHOLDER =
  /^(placeholders?|.*-placeholder|placeholder-.*|replace-?me|replace-?this|change-?me|changeit|todo|tbd|fixme|xxx+|dummy|your-[a-z0-9.-]+|(app|service|project|application|component|image|deployment|container|release|chart)-?name|name|values\..*|\.values\..*|release\.name|chart\.name)$/;

export function isPlaceholderName(name: string): boolean {
  return PLACEHOLDER.test(name);
}
