/**
 * Go test-support packages (docs/decisions.md, "Go test-support packages"). Go keeps tests in
 * `_test.go` files, but helpers shared by several packages' tests live in ordinary files of a
 * package of their own (the standard library's `net/http/httptest`, `testing/fstest`; by
 * convention `<name>test`), which import the `testing` package for `*testing.T`. A program's
 * code has no use for `testing` (the `go test` runner provides it), so such a file is test code:
 * the addresses it builds (`url.Parse("http://am")`) are fixtures, not calls of the program.
 */

/** An `import "testing"` line or an entry of an import block naming the `testing` package. */
const IMPORTS_TESTING = /^\s*(?:import\s+)?(?:[\w.]+\s+)?"testing"\s*$/m;

/** Whether a (non `_test.go`) Go file is test-support code: it imports the `testing` package. */
export function isGoTestSupport(path: string, text: string): boolean {
  return /\.go$/.test(path) && IMPORTS_TESTING.test(text);
}
