/**
 * Shared types of the code analyzers: deployable units, parsed manifests and declared
 * dependencies, and the model the per-aspect analyzers (manifests, imports, connections) read.
 */
import type { AnalyzerGap, SourceFile } from '../evidence';

export type Ecosystem = 'npm' | 'go' | 'pypi' | 'maven' | 'cargo' | 'nuget' | 'composer';

export type ManifestKind =
  | 'package.json'
  | 'go.mod'
  | 'requirements.txt'
  | 'pyproject.toml'
  | 'setup.py'
  | 'Pipfile'
  | 'pom.xml'
  | 'build.gradle'
  | 'Cargo.toml'
  | 'csproj'
  | 'composer.json';

export interface DeclaredDependency {
  ecosystem: Ecosystem;
  /** As written in the manifest (Maven: `groupId:artifactId`). */
  name: string;
  version: string | null;
  dev: boolean;
  /** The manifest file and the lines that declare it. */
  path: string;
  line: number;
  endLine: number;
  attributes: Record<string, unknown>;
}

export interface ParsedManifest {
  path: string;
  kind: ManifestKind;
  ecosystem: Ecosystem;
  /** Evidence provider (`npm`, `go-modules`, `pip`, `pyproject`, `maven`...). */
  provider: string;
  /** The manifest's own name for the unit, if it declares one. */
  name: string | null;
  nameLine: number | null;
  dependencies: DeclaredDependency[];
  /**
   * Only aggregates other packages (npm `workspaces`, a Cargo virtual manifest, a Maven
   * aggregator POM): on its own it does not make its directory a deployable unit.
   */
  workspaceRoot: boolean;
  /** Member globs / paths of a workspace root, relative to its directory. */
  workspaceMembers: string[];
  /** go.mod `module` path. */
  goModule: string | null;
  /** Requirement files included with `-r` (repository paths). */
  includes: string[];
  gaps: AnalyzerGap[];
}

export interface Unit {
  /** `service:<name>`. */
  key: string;
  /** Normalized unit name (the part after `service:`). */
  name: string;
  /** Repository-relative directory; '' is the repository root. */
  dir: string;
  /** The manifest's own name (as written), when one declares it. */
  manifestName: string | null;
  /** Manifests in the directory, plus requirement files they include. */
  manifests: ParsedManifest[];
  dockerfiles: string[];
  lockfiles: string[];
  ecosystems: Ecosystem[];
  aliases: string[];
  /** Full package.json name (with scope) for bare-specifier imports. */
  npmName: string | null;
  goModule: string | null;
  /** Importable Python names the unit is known by (directory / project name). */
  pythonNames: string[];
  /** Directory of the workspace root this unit is a member of. */
  workspaceRootDir: string | null;
  /** Where the unit-declared evidence points. */
  citation: { path: string; line: number; provider: string };
  /** What the unit is (classify.ts: service, library, test...), once classified. */
  unitClass?: string;
}

export interface CodeModel {
  /** Normalized, de-duplicated, not in skipped directories, sorted by path. */
  files: SourceFile[];
  fileByPath: Map<string, SourceFile>;
  /** Sorted by directory. */
  units: Unit[];
  unitByDir: Map<string, Unit>;
  /** Files owned by each unit (by unit key), sorted by path. */
  filesByUnit: Map<string, SourceFile[]>;
  /**
   * Files a Spring Cloud config server serves to other units (analysis/code/spring-cloud.ts):
   * listed under the units they configure and read as application configuration there.
   */
  servedConfig?: ReadonlySet<string>;
  /** The deepest unit whose directory contains `path` (a file or a directory). */
  ownerOf(path: string): Unit | null;
}
