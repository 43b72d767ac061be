/**
 * The XML element tree of a build manifest (pom.xml, *.csproj), read with sax (isaacs/sax-js, a
 * maintained streaming XML parser that reports the line of every event) in strict mode, where
 * each well-formedness error is recorded in `errors` and parsing resumes (sax's own recovery:
 * a closing tag closes the elements left open inside it, an unmatched one is skipped). Namespace
 * prefixes are dropped from element and attribute names. Text content is entity-decoded; CDATA
 * counts as text. Every element carries the lines of its start and end tag so evidence can cite
 * it. It never throws.
 */
import sax from 'sax';

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
  /** 1-based line of the start tag and of the end tag. */
  line: number;
  endLine: number;
}

export interface XmlDocument {
  root: XmlElement | null;
  errors: string[];
}

function localName(name: string): string {
  const i = name.indexOf(':');
  return i < 0 ? name : name.slice(i + 1);
}

export function readXml(input: string): XmlDocument {
  const errors: string[] = [];
  const docRoot: XmlElement = {
    name: '#document',
    attrs: {},
    children: [],
    text: '',
    line: 1,
    endLine: 1,
  };
  const stack: XmlElement[] = [docRoot];
  const top = (): XmlElement => stack[stack.length - 1] as XmlElement;
  const text = input.replace(/^\uFEFF/, '');
  const parser = sax.parser(true, { position: true });
  const line = (): number => parser.line + 1;
  // The line of an offset, counted forward (tags come in document order).
  let counted = 0;
  let countedLine = 1;
  const lineAt = (offset: number): number => {
    for (; counted < offset; counted++) if (text.charCodeAt(counted) === 10) countedLine++;
    return countedLine;
  };
  let tagLine = 1;

  parser.onerror = (err) => {
    errors.push(`line ${line()}: ${err.message.split('\n')[0] ?? ''}`);
    parser.resume();
  };
  // A start tag may span lines: its line is the line of its `<` (startTagPosition is 1-based).
  parser.onopentagstart = () => {
    tagLine = lineAt(parser.startTagPosition - 1);
  };
  parser.onopentag = (tag) => {
    const attrs: Record<string, string> = {};
    for (const [name, value] of Object.entries(tag.attributes)) {
      attrs[localName(name)] = typeof value === 'string' ? value : value.value;
    }
    const el: XmlElement = {
      name: localName(tag.name),
      attrs,
      children: [],
      text: '',
      line: tagLine,
      endLine: tagLine,
    };
    top().children.push(el);
    stack.push(el);
  };
  parser.onclosetag = () => {
    const el = stack.pop() as XmlElement;
    // A self-closing element ends on the line it starts.
    if (!parser.tag?.isSelfClosing) el.endLine = line();
  };
  parser.ontext = (text) => {
    top().text += text;
  };
  parser.oncdata = (text) => {
    top().text += text;
  };

  try {
    parser.write(text).close();
  } catch (err) {
    // sax throws only when an error is left unresumed; record it like the others.
    errors.push(
      `line ${line()}: ${err instanceof Error ? (err.message.split('\n')[0] ?? '') : ''}`,
    );
  }
  if (stack.length > 1) {
    errors.push(`unclosed element <${top().name}>`);
    // sax resets its position when it closes: the open elements end on the last line.
    const last = lineAt(text.length);
    for (const el of stack.slice(1)) el.endLine = last;
  }
  const root = docRoot.children[0] ?? null;
  if (!root) errors.push('no root element');
  return { root, errors };
}

export function child(el: XmlElement | null | undefined, name: string): XmlElement | undefined {
  return el?.children.find((c) => c.name === name);
}

export function children(el: XmlElement | null | undefined, name: string): XmlElement[] {
  return el ? el.children.filter((c) => c.name === name) : [];
}

export function childText(el: XmlElement | null | undefined, name: string): string | null {
  const c = child(el, name);
  return c ? c.text.trim() : null;
}
