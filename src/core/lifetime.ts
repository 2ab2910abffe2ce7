/**
 * Lifetimes (vscode-pull-request-github's pattern, without vscode): a Disposable base whose `_register`
 * ties a resource to the owner, and a store for one lifetime (the extension's, or one agent process's).
 * Registering after dispose disposes at once, so nothing registered late leaks.
 */
export interface IDisposable {
  dispose(): void;
}

export class Disposable implements IDisposable {
  private readonly owned: IDisposable[] = [];
  private disposed = false;

  get isDisposed(): boolean {
    return this.disposed;
  }

  protected _register<T extends IDisposable>(item: T): T {
    if (this.disposed) item.dispose();
    else this.owned.push(item);
    return item;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    // Last registered, first disposed: later things may depend on earlier ones.
    for (const item of this.owned.splice(0).reverse()) {
      try {
        item.dispose();
      } catch {
        /* one failing dispose must not keep the rest alive */
      }
    }
  }
}

/** The resources of one lifetime. */
export class DisposableStore extends Disposable {
  add<T extends IDisposable>(item: T): T {
    return this._register(item);
  }

  /** A plain function as a disposable of this store. */
  addCallback(fn: () => void): void {
    this._register({ dispose: fn });
  }
}
