// The bytes that give JSON text its structure, for the scans that read a body's bytes before (or instead of)
// parsing it whole: src/http/body-bounds.ts and src/catalogue-files/catalogue-reader.ts. Each is ASCII, so a byte
// equal to one is that character in UTF-8, never part of another.
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;

export const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
