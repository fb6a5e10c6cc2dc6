// The console's style sheet, imported with `{ type: 'text' }`: its text.
declare module '*/console.css' {
  const text: string
  export default text
}
