/** What a message quotes of a caller's input is cut to this many characters: a 100 KB name is not echoed whole. */
export const MAX_QUOTED = 100;

export const clip = (text: string) => (text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text);
