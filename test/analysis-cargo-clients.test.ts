/**
 * Rust desktop applications and command-line tools are no deployed services (issue 23, session
 * 16; docs/decisions.md, "A Tauri desktop app is a client, a Rust command-line tool a tool"). File
 * sets are built in memory and run through the analyzers and reconcile as an audit does.
 */
import test from 'ava';
import { analyzeFileMap, entityKeys } from './helpers/pipeline';

const SERVER_CARGO = `[package]
name = "ledger-api"
version = "0.1.0"

[dependencies]
axum = "0.7"
tokio = { version = "1", features = ["full"] }
clap = { version = "4", features = ["derive"] }
`;
const SERVER_MAIN = 'fn main() { let _ = tokio::net::TcpListener::bind("0.0.0.0:8080"); }\n';

const DESKTOP_CARGO = `[package]
name = "ledger-desktop"
version = "0.1.0"

[lib]
name = "ledger_desktop_lib"

[build-dependencies]
tauri-build = { version = "2", features = [] }

[dependencies]
tauri = { version = "2", features = ["tray-icon"] }
tauri-plugin-shell = "2"
serde = "1"
`;
const PLUGIN_EXAMPLE_CARGO = `[package]
name = "demo-app"
version = "0.1.0"

[dependencies]
tauri = { version = "2" }
`;
const PACKER_CARGO = `[package]
name = "asset-packer"
version = "0.1.0"

[dependencies]
clap = { version = "4", features = ["derive"] }
walkdir = "2"
zip = "2"
serde_json = "1"
`;
const PACKER_MAIN = `use clap::Parser;
#[derive(Parser)]
struct Args { #[arg(short, long)] input: std::path::PathBuf }
fn main() { let _ = Args::parse(); }
`;

const base = {
  'ledger-api/Cargo.toml': SERVER_CARGO,
  'ledger-api/src/main.rs': SERVER_MAIN,
};

test('a Tauri desktop app (tauri-build) is a client, not a service', async (t) => {
  const { graph } = await analyzeFileMap({
    ...base,
    'desktop/src-tauri/Cargo.toml': DESKTOP_CARGO,
    'desktop/src-tauri/build.rs': 'fn main() { tauri_build::build() }\n',
    'desktop/src-tauri/src/main.rs': 'fn main() { ledger_desktop_lib::run() }\n',
    'desktop/src-tauri/src/lib.rs': 'pub fn run() { tauri::Builder::default(); }\n',
    'desktop/src-tauri/tauri.conf.json': '{ "productName": "Ledger" }\n',
  });
  const keys = entityKeys(graph);
  t.true(keys.includes('service:ledger-api'), keys.join('\n'));
  t.false(
    keys.some((k) => /desktop|src-tauri/.test(k)),
    keys.join('\n'),
  );
});

test("a plugin's example binary depending on tauri is a client", async (t) => {
  const { graph } = await analyzeFileMap({
    ...base,
    'plugin/examples/demo/src-tauri/Cargo.toml': PLUGIN_EXAMPLE_CARGO,
    'plugin/examples/demo/src-tauri/src/main.rs': 'fn main() { tauri::Builder::default(); }\n',
  });
  const keys = entityKeys(graph);
  t.false(
    keys.some((k) => /demo|src-tauri/.test(k)),
    keys.join('\n'),
  );
});

test('a Rust command-line program with no runtime or client is a tool', async (t) => {
  const { graph } = await analyzeFileMap({
    ...base,
    'crates/asset-packer/Cargo.toml': PACKER_CARGO,
    'crates/asset-packer/src/main.rs': PACKER_MAIN,
  });
  const keys = entityKeys(graph);
  t.true(keys.includes('service:ledger-api'), keys.join('\n'));
  t.false(keys.includes('service:asset-packer'), keys.join('\n'));
});

test('a Rust server that also parses arguments stays a service', async (t) => {
  const { graph } = await analyzeFileMap(base);
  t.true(entityKeys(graph).includes('service:ledger-api'));
});

test('a command-line program whose code binds a socket stays a service', async (t) => {
  const { graph } = await analyzeFileMap({
    'crates/asset-packer/Cargo.toml': PACKER_CARGO,
    'crates/asset-packer/src/main.rs':
      PACKER_MAIN + 'fn serve() { std::net::TcpListener::bind("0.0.0.0:9000").unwrap(); }\n',
  });
  t.true(entityKeys(graph).includes('service:asset-packer'));
});

test('a desktop app or tool a compose file builds and runs stays a service', async (t) => {
  const { graph } = await analyzeFileMap({
    'desktop/src-tauri/Cargo.toml': DESKTOP_CARGO,
    'desktop/src-tauri/src/main.rs': 'fn main() {}\n',
    'crates/asset-packer/Cargo.toml': PACKER_CARGO,
    'crates/asset-packer/src/main.rs': PACKER_MAIN,
    'crates/asset-packer/Dockerfile':
      'FROM rust:1\nCOPY . .\nRUN cargo build --release\nCMD ["./target/release/asset-packer"]\n',
    'docker-compose.yml':
      'services:\n  asset-packer:\n    build: ./crates/asset-packer\n  ledger-desktop:\n    build:\n      context: ./desktop/src-tauri\n',
  });
  const keys = entityKeys(graph);
  t.true(keys.includes('service:asset-packer'), keys.join('\n'));
  t.true(keys.includes('service:ledger-desktop'), keys.join('\n'));
});
