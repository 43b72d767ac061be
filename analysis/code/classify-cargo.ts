/**
 * Cargo packages that are build automation, not a deployed unit (classify.ts; docs/decisions.md,
 * "A cargo-xtask crate is a tool"). The cargo-xtask convention (github.com/matklad/cargo-xtask):
 * a workspace's development tasks (code generation, running the stack, releases) are a binary
 * package named `xtask`, run on the developer's machine or in CI by `cargo xtask <task>` (an alias
 * of `cargo run --package xtask --`). It runs and exits; nothing deploys it. A Dockerfile (checked
 * by the caller) or a deployment that runs it still makes it a service.
 */
import { readToml, tomlText } from './toml';

/** The package name the cargo-xtask convention gives the automation crate. */
const XTASK = /^xtask$/i;

/** Why the Cargo manifest `path` (text `text`) is a build-automation tool, or null. */
export function cargoToolReason(path: string, text: string): string | null {
  const doc = readToml(text);
  const name = tomlText(
    doc.assignments.find(
      (a) => a.path.length === 2 && a.path[0] === 'package' && a.path[1] === 'name',
    )?.value,
  );
  if (name && XTASK.test(name))
    return `${path} is the workspace's cargo-xtask package (build automation run by \`cargo xtask\`)`;
  return null;
}

/** A Cargo dependency as the classifier sees it: its name and the manifest section it is in. */
interface CargoDependency {
  name: string;
  dev: boolean;
}

/** A file of the unit: its path and text. */
interface OwnedFile {
  path: string;
  text: string;
}

/** The binary entry point of a Cargo package (`src/main.rs`, `src/bin/*.rs`). */
const CARGO_MAIN = /(^|\/)src\/(main\.rs|bin\/[^/]+\.rs)$/;

/**
 * Why the Cargo package is a Tauri desktop application, or null. Tauri's application template
 * gives every app a build script calling `tauri_build::build()` (the `tauri-build` build
 * dependency), and its binary depends on `tauri`: a program installed on users' machines, not a
 * deployed service. A Tauri plugin (`tauri-plugin` build dependency, a library) is not matched;
 * nor is a package that only talks to a Tauri app.
 */
export function cargoDesktopAppReason(
  path: string,
  deps: readonly CargoDependency[],
  owned: readonly OwnedFile[],
): string | null {
  const names = new Set(deps.filter((d) => !d.dev).map((d) => d.name));
  if (names.has('tauri-build'))
    return `${path} builds a Tauri desktop application (tauri-build): a client installed on users' machines`;
  if (names.has('tauri') && owned.some((f) => CARGO_MAIN.test(f.path)))
    return `${path} is a Tauri desktop application (a binary depending on tauri): a client installed on users' machines`;
  return null;
}

/** Command-line argument parsers: what a Rust command-line program depends on. */
const CLI_PARSER = /^(clap|structopt|argh|pico-args|gumdrop|lexopt|bpaf)$/;
/**
 * What a long-running Rust program depends on: an async runtime, a server framework, a network
 * client or RPC stack, a message/stream consumer. (Datastore/broker clients are checked by the
 * caller's client table.)
 */
const RUNTIME_CRATE =
  /^(tokio|async-std|smol|actix|actix-rt|actix-web|axum|hyper|warp|rocket|tonic|poem|salvo|tide|tower|reqwest|ureq|isahc|surf|tungstenite|tokio-tungstenite|lapin|rdkafka|async-nats|nats|redis|sqlx|diesel|sea-orm|mongodb|tiny_http|rouille|gotham|thruster|nickel|iron)$/;
/** Rust code that accepts connections. */
const RUST_LISTENS = /\b(TcpListener|UdpSocket|UnixListener)::bind\b|\.bind\s*\(\s*["(&]/;

/**
 * Why the Cargo package is a command-line tool that runs and exits, or null: a binary that
 * parses its arguments (clap, argh...) and depends on no async runtime, server framework,
 * network client or datastore/broker client (`isClient` says which dependency is one), and whose
 * code binds no socket. Such a program works on the files it is given (a bundler, a generator)
 * when a developer or a build script runs it; nothing deploys it. A Dockerfile or a deployment
 * that runs it still makes it a service (checked by the caller and by reconcile).
 */
export function cargoCommandLineToolReason(
  path: string,
  deps: readonly CargoDependency[],
  owned: readonly OwnedFile[],
  isClient: (name: string) => boolean,
): string | null {
  const runtime = deps.filter((d) => !d.dev).map((d) => d.name);
  const parser = runtime.find((d) => CLI_PARSER.test(d));
  if (parser === undefined) return null;
  if (runtime.some((d) => RUNTIME_CRATE.test(d) || isClient(d))) return null;
  const rust = owned.filter((f) => f.path.endsWith('.rs'));
  if (!rust.some((f) => CARGO_MAIN.test(f.path))) return null;
  if (rust.some((f) => RUST_LISTENS.test(f.text))) return null;
  return `${path} is a command-line program (${parser}) with no runtime, server, network or datastore dependency: a tool that runs and exits`;
}
