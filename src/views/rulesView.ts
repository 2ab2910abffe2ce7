/**
 * The Permission Rules view (Atrium's sidebar): every rule by where it is kept — this session, this
 * workspace, everywhere — with Revoke on each (inline), Add Rule… (a tool kind and a command line, read by
 * the same parser the rule checks use) and Filter… in its title bar.
 */
import * as vscode from 'vscode';
import { describeRule, type PermissionRule, type PermissionRuleStore, type RuleWhere, ruleFromLine, ruleTarget } from '../host/permissionRules';
import { registerCommand } from './commandRegistry';
import { whereLabel } from './permissionDialog';

type Node = { place: RuleWhere } | { rule: PermissionRule };

const PLACE_NAMES: Record<RuleWhere, () => string> = {
  session: () => vscode.l10n.t('This session'),
  workspace: () => vscode.l10n.t('This workspace'),
  user: () => vscode.l10n.t('Everywhere'),
};

/** Tool kinds a rule added by hand may name (ACP's), execute first: commands are what rules are mostly for. */
const KINDS = ['execute', 'edit', 'delete', 'move', 'read', 'search', 'fetch', 'other'];

class RulesTree implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  filter = '';

  constructor(private readonly rules: PermissionRuleStore) {}

  refresh(): void {
    this.changed.fire();
  }

  private shown(place: RuleWhere): PermissionRule[] {
    const needle = this.filter.toLowerCase();
    return this.rules.list().filter((r) => r.where === place && describeRule(r).toLowerCase().includes(needle));
  }

  getChildren(node?: Node): Node[] {
    if (!node) return this.rules.places().map((place) => ({ place }));
    return 'place' in node ? this.shown(node.place).map((rule) => ({ rule })) : [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if ('place' in node) {
      const count = this.shown(node.place).length;
      const item = new vscode.TreeItem(PLACE_NAMES[node.place](), count ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
      // A new id once it has rules: VS Code keeps an id's collapsed state, so an empty group would stay shut.
      item.id = `place:${node.place}:${count ? 'rules' : 'empty'}`;
      item.description = vscode.l10n.t('{0} rule(s)', count);
      item.tooltip = whereLabel(node.place);
      item.contextValue = 'agentHost.rulePlace';
      return item;
    }
    const { rule } = node;
    // Short enough for the side bar: the group says where, the description the tool kind and agent, the tooltip all of it.
    const item = new vscode.TreeItem(rule.action === 'allow' ? vscode.l10n.t('Always allow {0}', ruleTarget(rule)) : vscode.l10n.t('Always reject {0}', ruleTarget(rule)));
    item.id = `rule:${rule.id}`;
    item.description = [rule.toolKind, rule.agent].filter(Boolean).join(' · ');
    item.tooltip = `${describeRule(rule)}\n${new Date(rule.createdAt).toLocaleString()}`;
    item.iconPath = new vscode.ThemeIcon(rule.action === 'allow' ? 'pass' : 'circle-slash');
    item.contextValue = 'agentHost.rule';
    return item;
  }
}

export function registerRulesView(rules: PermissionRuleStore, log: vscode.LogOutputChannel): vscode.Disposable {
  const tree = new RulesTree(rules);
  const view = vscode.window.createTreeView('agentHost.rules', { treeDataProvider: tree, showCollapseAll: false });
  const revoke = async (rule: PermissionRule) => {
    if (!(await rules.revoke(rule.id))) return;
    log.info(`Rule revoked in the rules view: ${describeRule(rule)}`);
  };
  return vscode.Disposable.from(
    view,
    rules.onDidChange(() => tree.refresh()),
    // The view is hidden until asked for: beside the chat it would take the sidebar's title bar from it.
    registerCommand('agentHost.showPermissionRules', async () => void (await vscode.commands.executeCommand('agentHost.rules.focus'))),
    registerCommand('agentHost.revokeRule', async (node?: unknown) => {
      const rule = (node as { rule?: PermissionRule } | undefined)?.rule;
      if (rule) await revoke(rule);
      else await vscode.commands.executeCommand('agentHost.managePermissionRules');
    }),
    registerCommand('agentHost.filterRules', async () => {
      const text = await vscode.window.showInputBox({
        title: vscode.l10n.t('Filter permission rules'),
        prompt: vscode.l10n.t('Rules whose text contains this are shown; empty shows all.'),
        value: tree.filter,
      });
      if (text === undefined) return;
      tree.filter = text.trim();
      view.description = tree.filter ? vscode.l10n.t('filter: {0}', tree.filter) : '';
      tree.refresh();
    }),
    registerCommand('agentHost.addRule', async () => {
      const action = await vscode.window.showQuickPick(
        [
          { label: vscode.l10n.t('Always allow'), action: 'allow' as const },
          { label: vscode.l10n.t('Always reject'), action: 'reject' as const },
        ],
        { title: vscode.l10n.t('Add a permission rule (1/4): allow or reject') },
      );
      if (!action) return;
      const kind = await vscode.window.showQuickPick(KINDS, { title: vscode.l10n.t('Add a permission rule (2/4): the tool kind') });
      if (!kind) return;
      const line = await vscode.window.showInputBox({
        title: vscode.l10n.t('Add a permission rule (3/4): the command'),
        prompt: vscode.l10n.t('One command of plain words, e.g. npm test: it answers exactly that command line.'),
        validateInput: (value) => {
          const parsed = ruleFromLine(value);
          return 'reason' in parsed ? vscode.l10n.t('This cannot be a rule: {0}', parsed.reason) : undefined;
        },
      });
      const parsed = line === undefined ? undefined : ruleFromLine(line);
      if (!parsed || 'reason' in parsed) return;
      const where = await vscode.window.showQuickPick(
        rules.places().map((w) => ({ label: whereLabel(w), where: w, picked: w === 'workspace' })),
        { title: vscode.l10n.t('Add a permission rule (4/4): keep it for') },
      );
      if (!where) return;
      const rule = await rules.add({ action: action.action, toolKind: kind, command: parsed.command }, where.where);
      log.info(`Rule added by hand: ${describeRule(rule)}`);
    }),
  );
}
