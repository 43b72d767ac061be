// Vite's `?url` imports: the address of a file the build emits under /app/assets/.
declare module '*?url' {
  const url: string;
  export default url;
}
