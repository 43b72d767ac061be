// oidc-provider ships no type declarations; api/oauth/provider.ts types the parts it uses.
declare module 'oidc-provider';
