/**
 * Syntax highlighting of cited lines with lowlight (highlight.js's grammars, as a syntax tree):
 * the tree is flattened into tokens per line, each with highlight.js's class names, and the
 * explorer renders them as text in <span>s. No HTML string is ever parsed and no style is
 * injected at run time (the console's CSP allows neither); the colours are in explorer.css.
 * Loaded on demand, with the first evidence shown.
 */
import { common, createLowlight } from 'lowlight';

const lowlight = createLowlight(common);

// The syntax tree's nodes, as lowlight types them (hast).
type Root = ReturnType<typeof lowlight.highlight>;
type RootContent = Root['children'][number];
type ElementContent = Extract<RootContent, { type: 'element' }>['children'][number];

export interface Token {
  text: string;
  className: string;
}

/** The language of a file by its name, or null (then the lines stay plain). */
export function languageOf(path: string | null): string | null {
  if (!path) return null;
  const name = path.split('/').pop()!.toLowerCase();
  if (name === 'dockerfile' || name.endsWith('.dockerfile')) return 'dockerfile';
  if (name === 'makefile') return 'makefile';
  const ext = name.includes('.') ? name.split('.').pop()! : '';
  const byExt: Record<string, string> = {
    tf: 'ini',
    hcl: 'ini',
    mjs: 'javascript',
    cjs: 'javascript',
  };
  const lang = byExt[ext] ?? ext;
  return lang && lowlight.registered(lang) ? lang : null;
}

/** The lines as tokens, one array per line; the lines are highlighted as one text. */
export function highlightLines(path: string | null, lines: string[]): Token[][] {
  const lang = languageOf(path);
  if (!lang) return lines.map((text) => [{ text, className: '' }]);
  const tree = lowlight.highlight(lang, lines.join('\n'));
  const out: Token[][] = [[]];
  const walk = (nodes: Array<RootContent | ElementContent>, classes: string[]) => {
    for (const node of nodes) {
      if (node.type === 'text') {
        const parts = node.value.split('\n');
        parts.forEach((text, i) => {
          if (i > 0) out.push([]);
          if (text) out[out.length - 1]!.push({ text, className: classes.join(' ') });
        });
      } else if (node.type === 'element') {
        const own = node.properties.className;
        walk(node.children, [...classes, ...(Array.isArray(own) ? own.map(String) : [])]);
      }
    }
  };
  walk(tree.children, []);
  return out;
}
