import { createRedactor, type Redactor, urlSecrets } from "@bundlekit/core";
import type { ServerConfig } from "./config.ts";
import { postgresPassword } from "./database-url.ts";

/**
 * The redaction every log line and error of the service passes through: URLs cut to scheme, host
 * and port, and the configuration's secrets hidden wherever they appear (relayer keys and the
 * paymaster signer key, also in decimal; the database password; the node URLs' keys; API keys; the builder API's JWT secret; the preconfirmation key).
 */
export function serviceRedactor(
  config: ServerConfig,
  extraSecrets: readonly (string | undefined)[] = [],
): Redactor {
  const { rpcUrl, bundler } = config;
  return createRedactor([
    ...config.relayerKeys,
    config.paymasterEndpoint?.signerKey,
    ...(config.sponsorshipPolicy?.keys.map((key) => key.apiKey) ?? []),
    ...postgresPassword(config.database),
    ...(rpcUrl ? urlSecrets(rpcUrl) : []),
    ...(bundler.relaying?.submitUrl ? urlSecrets(bundler.relaying.submitUrl) : []),
    config.explorerApiKey,
    config.builder?.jwtSecret,
    config.preconfirmationKey,
    ...extraSecrets,
  ]);
}
