/**
 * The Temporal Web UI server's (ui-server's) config file, as this project writes it for a server it
 * starts: the frontend it talks to and where it listens, with the settings every such UI shares (no
 * news fetch, quiet logs, cookies over plain http on loopback), and the sections a caller adds (the
 * dev server's codec endpoint; the production rehearsal's TLS and sign-in).
 */
export interface UiServerConfig {
  /** Who wrote the file, for its first line. */
  readonly writtenBy: string;
  readonly frontend: string;
  readonly host: string;
  readonly port: number;
  /** More top-level YAML sections, each ending with a newline. */
  readonly sections?: readonly string[];
}

export function uiServerConfigYaml({ writtenBy, frontend, host, port, sections = [] }: UiServerConfig): string {
  return `# Written by ${writtenBy}.
temporalGrpcAddress: ${frontend}
host: ${host}
port: ${port}
enableUi: true
defaultNamespace: default
hideLogs: true
disableNewsFetch: true
cors:
  cookieInsecure: true
${sections.join('')}`;
}
