// Typings for the untyped CommonJS package `snowball-stemmers` (Snowball stemmers compiled to JS).
declare module 'snowball-stemmers' {
  const snowball: {
    newStemmer(language: string): { stem(word: string): string };
    algorithms(): string[];
  };
  export = snowball;
}
