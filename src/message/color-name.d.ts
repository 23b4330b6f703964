// Typings for the untyped CommonJS package `color-name` (the CSS named colours as [r, g, b]).
declare module 'color-name' {
  const colors: Record<string, [number, number, number]>;
  export = colors;
}
