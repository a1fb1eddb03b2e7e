export { redactUrl, redactUrls, urlSecrets } from "./redact-urls.ts";
export { redactingLogger } from "./redacting-logger.ts";
export { createRedactor, REDACTED, type Redactor } from "./redactor.ts";
