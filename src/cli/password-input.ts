import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';

/** Reads a password: from a prompt with echo off on a terminal, else the first line of stdin. */
export async function readPassword(prompt: string): Promise<string> {
  if (!process.stdin.isTTY) return firstLineOfStdin();
  const first = await promptHidden(prompt);
  const second = await promptHidden('Repeat the password: ');
  if (first !== second) throw new Error('the passwords do not match');
  return first;
}

async function firstLineOfStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return (Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0]) ?? '';
}

function promptHidden(prompt: string): Promise<string> {
  process.stdout.write(prompt);
  // Echo nothing back: the password never appears on screen or in a terminal recording.
  const silent = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  const rl = createInterface({ input: process.stdin, output: silent, terminal: true });
  return new Promise((resolve) => {
    rl.question('', (answer) => {
      rl.close();
      process.stdout.write('\n');
      resolve(answer);
    });
  });
}
