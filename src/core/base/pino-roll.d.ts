// pino-roll ships no types: the part of its one export the log file uses (it resolves to a SonicBoom).
declare module 'pino-roll' {
  import type SonicBoom from 'sonic-boom';

  interface PinoRollOptions {
    file: string;
    size?: string | number;
    frequency?: string | number;
    extension?: string;
    limit?: { count: number; removeOtherLogFiles?: boolean };
    symlink?: boolean;
    mkdir?: boolean;
    mode?: number;
    maxLength?: number;
    minLength?: number;
  }

  /** SonicBoom's own fields the types leave out: the file open now (it changes at each roll) and its descriptor. */
  type RollStream = SonicBoom & { readonly file?: string; readonly fd: number };

  export default function pinoRoll(options: PinoRollOptions): Promise<RollStream>;
}
