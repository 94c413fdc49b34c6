// A pipeline as concurrent sends: every command is written before any reply is
// awaited, so they travel together (both clients batch writes made in one
// tick), and on a cluster each goes to the node that owns its key. Error
// replies become entries; a lost connection rejects the whole call.
import { ReplyError, type Command, type Reply } from '../../core/backend.ts';

export function pipelineBySend(
  send: (command: Command) => Promise<Reply>,
  commands: readonly Command[],
): Promise<(Reply | ReplyError)[]> {
  return Promise.all(
    commands.map((command) =>
      send(command).catch((error: unknown) => {
        if (error instanceof ReplyError) return error;
        throw error;
      }),
    ),
  );
}
