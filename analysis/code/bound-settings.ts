/**
 * Settings keys the code binds to a named field (Spring `@Value("${yas.public.url}/cancel")
 * private String cancelUrl;`, also on a constructor parameter): a key whose every binding is a
 * field named for an address role (`returnUrl`, `cancelUrl`, `redirectUri`, `callbackUrl`) has
 * that role, although its own name (`yas.public.url`) says nothing: the URL is handed to
 * someone else (a payment provider's return and cancel pages), not called. Bindings are read
 * across the repository, as a library module may bind what its application's settings hold.
 */
import type { SourceFile } from '../evidence';
import { addressRole } from './address-roles';

const BINDING =
  /@Value\s*\(\s*"\$\{([\w.-]+)(?::[^}"]*)?\}[^"]*"\s*\)\s*(?:(?:private|protected|public|final|static|lateinit|var|val)\s+)*(?:[\w.<>?,[\]]+\s+)?(\w+)\s*(?:[;=),:]|$)/gm;

/** Settings key -> the role every field it is bound to has (keys with any other binding absent). */
export function boundRoles(files: SourceFile[]): Map<string, string> {
  const fields = new Map<string, Set<string>>();
  for (const f of files) {
    if (!/\.(java|kt)$/.test(f.path) || !f.text.includes('@Value')) continue;
    BINDING.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = BINDING.exec(f.text)) !== null) {
      const key = m[1] ?? '';
      const set = fields.get(key) ?? new Set<string>();
      set.add(m[2] ?? '');
      fields.set(key, set);
    }
  }
  const out = new Map<string, string>();
  for (const [key, names] of fields) {
    const roles = new Set([...names].map((n) => addressRole(n, false)));
    const [role] = [...roles];
    if (roles.size === 1 && role) out.set(key, role);
  }
  return out;
}
