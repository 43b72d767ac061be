/** Git ref names a client may ask us to fetch (a subset of `git check-ref-format` rules). */

/**
 * True for a usable branch or ref name: no leading `-` (it would read as an option), no
 * whitespace, control characters, `~ ^ : ? * [ \`, `..`, `@{`, `//`, leading or trailing `/`,
 * or trailing `.lock`.
 */
export function isValidRefName(ref: string): boolean {
  return !(
    ref.startsWith('-') || /[\s~^:?*[\\\x00-\x1f\x7f]|\.\.|@\{|\/\/|\.lock$|\/$|^\//.test(ref)
  );
}
