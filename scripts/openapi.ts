/** `npm run --silent openapi`: prints the OpenAPI 3.1 document generated from the registry. */
import { contractDocument } from '../api/contract';
import { loadConfig } from '../platform/config';

process.stdout.write(`${JSON.stringify(contractDocument(loadConfig().publicBaseUrl), null, 2)}\n`);
