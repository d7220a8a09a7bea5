// The tray icon: its image, tooltip and first menu line show the state; the menu offers Pause/Resume,
// Open and Quit.
import path from 'node:path';
import { Menu, nativeImage, Tray, type NativeImage } from 'electron';
import { trayView, type TraySnapshot, type TrayView } from './tray-state';

export interface TrayActions {
  open(): void;
  pause(): void;
  resume(): void;
  quit(): void;
}

export class AppTray {
  private readonly tray: Tray;
  private readonly images = new Map<string, NativeImage>();
  private current?: TrayView;
  menu?: Menu;

  constructor(
    private readonly resources: string,
    private readonly actions: TrayActions,
    snapshot: TraySnapshot,
  ) {
    const first = trayView(snapshot);
    this.tray = new Tray(this.image(first.icon));
    // Windows and macOS: a click opens the window (Linux AppIndicator shows the menu instead).
    this.tray.on('click', () => this.actions.open());
    this.show(first);
  }

  get view(): TrayView | undefined {
    return this.current;
  }

  update(snapshot: TraySnapshot): void {
    const next = trayView(snapshot);
    const c = this.current;
    if (c && c.icon === next.icon && c.tooltip === next.tooltip && c.status === next.status && c.action === next.action) return;
    this.show(next);
  }

  destroy(): void {
    if (!this.tray.isDestroyed()) this.tray.destroy();
  }

  private image(file: string): NativeImage {
    let img = this.images.get(file);
    if (!img) {
      // nativeImage picks up the @2x file beside it on HiDPI screens.
      img = nativeImage.createFromPath(path.join(this.resources, file));
      this.images.set(file, img);
    }
    return img;
  }

  private show(view: TrayView): void {
    this.current = view;
    if (this.tray.isDestroyed()) return;
    this.tray.setImage(this.image(view.icon));
    this.tray.setToolTip(view.tooltip);
    this.menu = Menu.buildFromTemplate([
      { id: 'status', label: view.status, enabled: false },
      { type: 'separator' },
      view.action === 'pause'
        ? { id: 'pause', label: 'Pause serving', click: () => this.actions.pause() }
        : { id: 'resume', label: 'Resume serving', click: () => this.actions.resume() },
      { id: 'open', label: 'Open Swan Provider Console', click: () => this.actions.open() },
      { type: 'separator' },
      { id: 'quit', label: 'Quit (stop serving)', click: () => this.actions.quit() },
    ]);
    this.tray.setContextMenu(this.menu);
  }
}
