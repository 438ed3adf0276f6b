/**
 * The parts of a Temporal server config YAML that every one-node server we start shares (the dev
 * server on SQLite, prod:check's on PostgreSQL): the four services on loopback ports, one cluster,
 * and the dynamic config file. Each caller writes its own log, persistence and global sections.
 */

/** gRPC and membership ports of one service (and the frontend's HTTP port). */
export interface ServicePorts {
  readonly grpc: number;
  readonly membership: number;
  readonly http?: number | undefined;
}

export interface OneNodePorts {
  readonly frontend: ServicePorts;
  readonly history: ServicePorts;
  readonly matching: ServicePorts;
  readonly worker: ServicePorts;
  /**
   * With an authorizer: the frontend the server's own services (the system worker) use, which
   * checks no token; the public frontend then checks every call. Temporal then requires that
   * publicClient be left out (the services find it through membership).
   */
  readonly internalFrontend?: ServicePorts;
}

export function oneNodeServicesYaml(host: string, ports: OneNodePorts, dynamicConfigPath: string): string {
  const service = ({ grpc, membership, http }: ServicePorts) =>
    `    rpc:\n      grpcPort: ${grpc}\n      membershipPort: ${membership}\n      bindOnIP: "${host}"${http === undefined ? '' : `\n      httpPort: ${http}`}`;
  return `services:
  frontend:
${service(ports.frontend)}
  history:
${service(ports.history)}
  matching:
${service(ports.matching)}
  worker:
${service(ports.worker)}${
    ports.internalFrontend
      ? `
  internal-frontend:
${service(ports.internalFrontend)}`
      : ''
  }

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "${host}:${ports.frontend.grpc}"

dcRedirectionPolicy:
  policy: "noop"

${ports.internalFrontend ? '' : `publicClient:\n  hostPort: "${host}:${ports.frontend.grpc}"\n`}
dynamicConfigClient:
  filepath: "${dynamicConfigPath}"
  pollInterval: "10s"
`;
}
