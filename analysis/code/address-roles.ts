/**
 * The role of an address (docs/decisions.md, "The role of an address"). An address a component
 * receives is a call only if the component uses it as a client. Addresses handed to a component
 * so that it can recognise or send a browser back to someone else (redirect and callback URIs,
 * CORS and allow-lists, token issuers, OIDC client registrations in an identity provider) are
 * not calls from the receiver: the receiver never opens a connection to them.
 *
 * The rule reads the name the address is given under (an environment variable, a configuration
 * key, an Aspire `WithEnvironment` name), never the name of a system.
 */

/**
 * Names whose address is never called by the one receiving it, whoever that is: redirect and
 * callback URIs, post-logout and return URLs, CORS and allowed origins, token issuers, sign-in /
 * sign-out landing pages.
 */
const ALWAYS = [
  [/call_?back/i, 'callback'],
  [/redirect/i, 'redirect'],
  [/return_?ur[li]/i, 'redirect'],
  // Where a payment or sign-in provider sends the browser when the user cancels.
  [/cancel_?ur[li]/i, 'redirect'],
  [/post_?logout/i, 'redirect'],
  [/front_?channel|back_?channel_?logout/i, 'redirect'],
  [/sign_?(in|out)_?(ur[li]|path|page)/i, 'redirect'],
  [/allowed_?(origin|host|hosts|url|urls|domain)|(^|[_.:])origins?$|cors/i, 'allow-list'],
  [/issuer/i, 'issuer'],
  // A URI that names a kind of thing, not a place: a problem type (RFC 9457 `Type =
  // "https://example/validation-error"`), a JSON schema, an XML namespace.
  [/^(type|type_?ur[il]|\$?schema|\$id|xmlns(:\w+)?|namespace)$/i, 'identifier'],
] as const satisfies readonly (readonly [RegExp, string])[];

/**
 * Names that register a client application with an identity provider (`SpaClient`,
 * `WebhooksWebClient`, `BASKET_CLIENT_URL`, `ClientUrls`): in an identity provider these are the
 * clients' own addresses (for its redirect allow-list); elsewhere such a name may be a client
 * the receiver uses, so they count only when the receiver is an identity provider.
 */
const CLIENT_REGISTRATION = /(client|clients)(_?(url|uri|urls|uris|origin|address))?$/i;

/** The issuer's discovery address an OAuth2 client is configured with (`issuer-uri`, `issuerUri`). */
const ISSUER_URI = /(^|[-_])issuer[-_]?uri$/i;

type AddressRole =
  'callback' | 'redirect' | 'allow-list' | 'issuer' | 'identifier' | 'client-registration' | 'self';

/**
 * The receiver's own address: its public URL (`App:SelfUrl`, `SELF_URL`), the endpoints it
 * listens on (`Kestrel:Endpoints:Http:Url`, `ASPNETCORE_URLS`). Never a call.
 */
function ownAddress(segments: string[], n: string): boolean {
  const last = segments[segments.length - 1] ?? '';
  return (
    /self_?(ur[li]s?|address|host)$/i.test(last) ||
    /^ASPNETCORE_(URLS|HTTPS?_PORTS)$/i.test(n) ||
    (segments.some((s) => /^kestrel$/i.test(s)) && /^(url|urls|endpoint)$/i.test(last))
  );
}

/**
 * A client registered with an identity provider by its own address, under a list of clients
 * (`IdentityServerClients:Web:RootUrl`, `Clients:PublicWeb:RootUrl`): the client's root or home
 * URL, which the provider only allows, never calls.
 */
function registeredClientRoot(segments: string[]): boolean {
  const last = segments[segments.length - 1] ?? '';
  if (!/^(root|home|client|front_?end)_?ur[li]$/i.test(last)) return false;
  return segments
    .slice(0, -1)
    .some((s) => /^(\w*(server|identity|oidc|openiddict|oauth2?|auth|keycloak))?clients$/i.test(s));
}

/** The role of an address given under `name`, or null when it may be an address the receiver calls. */
export function addressRole(name: string, receiverIsIdentityProvider: boolean): AddressRole | null {
  const n = name.trim();
  if (n === '') return null;
  // `A__B` (environment), `A:B` (.NET), `a.b` (nested settings keys).
  const segments = n.split(/__|[.:]/).filter(Boolean);
  if (ownAddress(segments, n)) return 'self';
  if (registeredClientRoot(segments)) return 'client-registration';
  // An OAuth2 client's or resource server's `issuer-uri` (Spring Security's
  // `spring.security.oauth2.client.provider.<id>.issuer-uri`, `...resourceserver.jwt.issuer-uri`):
  // the receiver fetches the provider's metadata and keys from it, a call. Only the provider
  // itself is handed its own issuer to recognise.
  if (!receiverIsIdentityProvider && ISSUER_URI.test(segments[segments.length - 1] ?? ''))
    return null;
  for (const [re, role] of ALWAYS) if (re.test(n)) return role;
  if (receiverIsIdentityProvider && CLIENT_REGISTRATION.test(n)) return 'client-registration';
  return null;
}

/**
 * Packages of identity providers and authorization servers (NuGet, npm, Maven, PyPI, Go): a unit
 * that depends on one is an identity provider.
 */
const IDP_PACKAGE =
  /^(duende\.identityserver|identityserver4|openiddict(\.server|\.aspnetcore)?|oidc-provider|node-oidc-provider|org\.springframework\.security:spring-security-oauth2-authorization-server|org\.springframework\.boot:spring-boot-starter-oauth2-authorization-server|org\.keycloak:keycloak-[\w-]+|django-oauth-toolkit|authlib|github\.com\/ory\/(hydra|fosite)|github\.com\/zitadel\/oidc)(\b|$)/i;
/** Images of identity providers (the last repository segment). */
const IDP_IMAGE =
  /(^|\/)(keycloak|identityserver|authentik|server-authentik|zitadel|dex|hydra|casdoor|logto)(:|@|$)/i;

export function isIdentityProviderPackage(name: string): boolean {
  return IDP_PACKAGE.test(name.trim());
}

export function isIdentityProviderImage(image: string): boolean {
  return IDP_IMAGE.test(image.trim().toLowerCase());
}

/**
 * The name an address at `at` is given under in `text`, from the text before it on its line
 * (`"RedirectUri": "`, `CALLBACK_URL=`, `redirect_uri: `, `options.RedirectUri = "`), or for an
 * item of a list (a JSON array, a YAML sequence) the key that opens the list a few lines up.
 */
export function addressKey(text: string, at: number): string | null {
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  const before = text.slice(lineStart, at);
  const own = KEY_BEFORE.exec(before);
  if (own) return own[1] ?? null;
  if (!/^\s*(?:-\s*)?[@$]?["'`]?$/.test(before)) return null;
  // A list item: walk up over sibling items to the line that opens the list.
  let end = lineStart - 1;
  for (let i = 0; i < 20 && end > 0; i++) {
    const start = text.lastIndexOf('\n', end - 1) + 1;
    const line = text.slice(start, end);
    const opens = /([A-Za-z_][\w.:-]*)["']?\s*(?:=|:)\s*[[(]?\s*$/.exec(line);
    if (opens) return opens[1] ?? null;
    if (!/^\s*(?:-\s*)?["'`][^"'`]*["'`]\s*,?\s*$/.test(line) && line.trim() !== '') return null;
    end = start - 1;
  }
  return null;
}
const KEY_BEFORE =
  /([A-Za-z_][\w.:-]*)["']?\s*(?:=|:|=>)\s*[[(]?\s*(?:[@$rRfFbBuU]{0,2}["'`])?\s*$/;
