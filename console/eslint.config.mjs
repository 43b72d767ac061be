// Lint rules of the web console (console/src, its own tsconfig), included by the root config.
// Repository-derived strings are rendered as text only: no raw HTML, no direct fetch (every call
// goes through the typed client, src/api/client.ts).
const RAW_HTML = [
  {
    selector: "JSXAttribute[name.name='dangerouslySetInnerHTML']",
    message: 'Render text: repository-derived strings are hostile (no dangerouslySetInnerHTML).',
  },
  {
    selector: 'AssignmentExpression[left.property.name=/^(innerHTML|outerHTML)$/]',
    message: 'Render text: repository-derived strings are hostile (no innerHTML).',
  },
  {
    selector: "CallExpression[callee.property.name='insertAdjacentHTML']",
    message: 'Render text: repository-derived strings are hostile (no insertAdjacentHTML).',
  },
];

export default [
  {
    files: ['console/src/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-syntax': ['error', ...RAW_HTML],
      'no-restricted-globals': [
        'error',
        {
          name: 'fetch',
          message: 'Call the API through src/api/client.ts (typed by the contract).',
        },
        { name: 'eval', message: 'The CSP forbids eval.' },
      ],
    },
  },
];
