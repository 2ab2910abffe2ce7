import { FileService } from '../../src/host/fileService';
import { TerminalService } from '../../src/host/terminalService';

/** The host services the CLI gives an agent: files on disk and terminals, both confined to `root`. */
export function plainHost(root: string): { files: FileService; terminals: TerminalService } {
  return { files: new FileService(() => [root]), terminals: new TerminalService(() => [root]) };
}
