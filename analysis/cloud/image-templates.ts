/**
 * Configuration templates an image renders from its environment at start (issue 23, session
 * 13): Go templates filled by tpl/gomplate/dockerize (`{{ .Env.XMPP_SERVER | default "xmpp" }}`,
 * `{{ $X := .Env.X | default "v" }}` then `{{ $X }}`, gomplate's `getenv "X" "v"`) and shell-style
 * `${X:-v}`. The literal defaults are what the container uses when its environment does not set
 * the variable; analysis/cloud/proxies.ts gives them to the service that runs the image.
 */

/** A literal default a template gives a variable, and the line it is written on. */
export interface TemplateDefault {
  variable: string;
  value: string;
  line: number;
}

const GO_ENV = /\.Env\.[A-Za-z_]\w*/;
const GETENV = /\bgetenv\s+"[A-Za-z_]\w*"/;

/** Whether a file is a template its image renders from environment variables. */
export function isImageTemplate(text: string): boolean {
  return /\{\{[^}\n]*(\.Env\.[A-Za-z_]|getenv\s+")/.test(text);
}

/** The variable and literal default of one template expression, or null. */
function defaultOf(expr: string): { variable: string; value: string | null } | null {
  const piped = /\.Env\.([A-Za-z_]\w*)\s*\|\s*default\s+(?:"([^"\\{}$]*)"|`([^`{}$]*)`)/.exec(expr);
  if (piped) return { variable: piped[1]!, value: piped[2] ?? piped[3] ?? '' };
  const prefix = /\bdefault\s+(?:"([^"\\{}$]*)"|`([^`{}$]*)`)\s+\.Env\.([A-Za-z_]\w*)/.exec(expr);
  if (prefix) return { variable: prefix[3]!, value: prefix[1] ?? prefix[2] ?? '' };
  const getenv = /\bgetenv\s+"([A-Za-z_]\w*)"(?:\s+"([^"\\{}$]*)")?/.exec(expr);
  if (getenv) return { variable: getenv[1]!, value: getenv[2] ?? null };
  const bare = /^\s*\.Env\.([A-Za-z_]\w*)\s*$/.exec(expr);
  if (bare) return { variable: bare[1]!, value: null };
  return null;
}

const ACTION = /\{\{-?([^{}\n]*?)-?\}\}/g;

/** Every literal default the template writes, first one per variable. */
export function templateDefaults(text: string): TemplateDefault[] {
  const out = new Map<string, TemplateDefault>();
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    for (const m of line.matchAll(ACTION)) {
      const d = defaultOf(m[1] ?? '');
      if (d && d.value !== null && d.value !== '' && !out.has(d.variable))
        out.set(d.variable, { variable: d.variable, value: d.value, line: i + 1 });
    }
    if (GO_ENV.test(line) || GETENV.test(line)) return;
    for (const m of line.matchAll(/\$\{([A-Za-z_]\w*):?-([^}$`'"\s]+)\}/g))
      if (!out.has(m[1]!)) out.set(m[1]!, { variable: m[1]!, value: m[2]!, line: i + 1 });
  });
  return [...out.values()];
}

/**
 * The template with the actions that give a value filled, lines kept: `.Env.X`, its default, and
 * a `$LOCAL` bound to one (`{{ $X := .Env.X | default "v" }}`). The environment wins over the
 * default; an action left unknown stays as written. `used` names the variables filled, and
 * `defaulted` those filled from the template's own default.
 */
export function renderTemplate(
  text: string,
  env: Map<string, string>,
): { text: string; used: Set<string>; defaulted: Set<string> } {
  const used = new Set<string>();
  const defaulted = new Set<string>();
  const locals = new Map<string, { variable: string; value: string | null }>();
  const valueOf = (d: { variable: string; value: string | null }): string | null => {
    const set = env.get(d.variable);
    if (set !== undefined) {
      used.add(d.variable);
      return set;
    }
    if (d.value === null) return null;
    used.add(d.variable);
    defaulted.add(d.variable);
    return d.value;
  };
  const out = text.replace(ACTION, (all, expr: string) => {
    const bind = /^\s*\$([A-Za-z_]\w*)\s*:?=\s*(.*)$/.exec(expr);
    if (bind) {
      const d = defaultOf(bind[2] ?? '');
      if (d) locals.set(bind[1]!, d);
      else locals.delete(bind[1]!);
      return all;
    }
    const ref = /^\s*\$([A-Za-z_]\w*)\s*$/.exec(expr);
    const d = ref ? locals.get(ref[1]!) : defaultOf(expr);
    const v = d ? valueOf(d) : null;
    return v ?? all;
  });
  return { text: out, used, defaulted };
}
