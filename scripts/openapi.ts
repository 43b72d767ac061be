/** `npm run --silent openapi`: prints the OpenAPI 3.1 document generated from the registry. */
import { contractDocument } from '../api/contract';

process.stdout.write(`${JSON.stringify(contractDocument(process.env.PUBLIC_BASE_URL), null, 2)}\n`);
