import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { PermissionBroker } from '../../host/permissionBroker';
import type { AgentManager } from '../../manager/agentManager';
import type { HostEvent, HostMessage, RequestMessage, Snapshot } from '../../shared/chatProtocol';
import type { TabHistories } from './tabHistories';
import type { TerminalSource } from './terminalCards';
import type { RestoreFiles } from './checkpointActions';
import { ChatController } from './chatController';
import { chatTitle } from './chatStrings';

export const CHAT_VIEW_ID = 'agentHost.chat';

/**
 * The sidebar chat: a webview view whose page (webview-ui/, bundled into dist/webview/) asks `ready` and
 * gets a snapshot, then events. Not kept alive while hidden: it re-renders from the controller's snapshot.
 */
export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  readonly controller: ChatController;
  /** Each live view's listeners, disposed with that view (a view is re-created every time it is shown). */
  private readonly views = new Set<vscode.Disposable[]>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    manager: AgentManager,
    log: vscode.LogOutputChannel,
    histories: TabHistories,
    broker: PermissionBroker | undefined,
    terminals?: TerminalSource,
    restoreFiles?: RestoreFiles,
  ) {
    this.controller = new ChatController(manager, log, histories, broker, terminals, restoreFiles);
  }

  /** Registers the view provider. */
  register(): vscode.Disposable {
    return vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, this, { webviewOptions: { retainContextWhenHidden: false } });
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    const root = vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview');
    view.webview.options = { enableScripts: true, localResourceRoots: [root] };
    view.webview.html = this.html(view.webview, root);
    let detach: (() => void) | undefined;
    const post = (message: HostMessage) => void view.webview.postMessage(message);
    const sink = (event: HostEvent) => {
      // The session's title (pi's setTitle / session name) as the view's description.
      const header = event.type === 'header' ? event.header : event.type === 'snapshot' ? event.snapshot.header : undefined;
      if (header) this.showTitle(view, header.title);
      post({ kind: 'event', event });
    };
    const listeners: vscode.Disposable[] = [];
    this.views.add(listeners);
    listeners.push(
      view.webview.onDidReceiveMessage(async (msg: RequestMessage) => {
        if (msg?.kind !== 'request' || typeof msg.id !== 'number') return;
        try {
          const result = await this.controller.handle(msg);
          post({ kind: 'response', id: msg.id, ok: true, result });
          // Events only after the snapshot: the page applies them on top of it.
          if (msg.method === 'ready') {
            this.showTitle(view, (result as Snapshot).header.title);
            detach?.();
            detach = this.controller.attach(sink);
          }
        } catch (error) {
          post({ kind: 'response', id: msg.id, ok: false, error: (error as Error).message });
        }
      }),
      view.onDidChangeVisibility(() => {
        if (!view.visible) {
          detach?.();
          detach = undefined;
        }
      }),
      view.onDidDispose(() => {
        detach?.();
        detach = undefined;
        this.views.delete(listeners);
        for (const d of listeners.splice(0)) d.dispose();
      }),
    );
  }

  /** The session's title (pi's setTitle / session name) in the view's title; a lone view shows only that. */
  private defaultTitle: string | undefined;
  private showTitle(view: vscode.WebviewView, title: string | undefined): void {
    this.defaultTitle ??= view.title ?? ''; // package.json names the view: its title is never unset
    view.title = title || this.defaultTitle;
  }

  private html(webview: vscode.Webview, root: vscode.Uri): string {
    const nonce = randomBytes(18).toString('base64');
    const uri = (f: string) => webview.asWebviewUri(vscode.Uri.joinPath(root, f)).toString();
    const csp = ["default-src 'none'", `img-src ${webview.cspSource} data:`, `style-src ${webview.cspSource} 'nonce-${nonce}'`, `font-src ${webview.cspSource}`, `script-src 'nonce-${nonce}'`].join(
      '; ',
    );
    return `<!DOCTYPE html>
<html lang="${vscode.env.language}">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${chatTitle().replace(/[<&]/g, (c) => (c === '<' ? '&lt;' : '&amp;'))}</title>
<link id="vscode-codicon-stylesheet" rel="stylesheet" href="${uri('codicon.css')}" nonce="${nonce}">
<link rel="stylesheet" href="${uri('chat-style.css')}" nonce="${nonce}">
</head>
<body>
<main id="app"></main>
<script nonce="${nonce}" src="${uri('chat.js')}"></script>
</body>
</html>`;
  }

  dispose(): void {
    for (const listeners of this.views) for (const d of listeners.splice(0)) d.dispose();
    this.views.clear();
    this.controller.dispose();
  }
}
