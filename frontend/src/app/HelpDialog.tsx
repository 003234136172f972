// The keyboard shortcuts, listed (opened with "?" or Ctrl+/).
import { useT } from "../i18n";
import type { MessageKey } from "../i18n/en";
import { Dialog } from "../ui/Dialog";

export const SHORTCUTS: [string, MessageKey][] = [
  ["Ctrl+Shift+O", "scNewChat"],
  ["Ctrl+K", "scSearch"],
  ["Ctrl+B", "scSidebar"],
  ["Shift+Esc", "scFocusComposer"],
  ["Enter", "scSend"],
  ["Shift+Enter", "scNewline"],
  ["Esc", "scStop"],
  ["?", "scHelp"],
  ["Esc", "scClose"],
];

export function HelpDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const t = useT();
  return (
    <Dialog open={open} onClose={onClose} title={t("shortcutsTitle")} className="help">
      <table className="shortcuts">
        <tbody>
          {SHORTCUTS.map(([k, label]) => (
            <tr key={label}>
              <td>
                {k.split("+").map((part, i) => (
                  <span key={i}>
                    {i > 0 && "+"}
                    <kbd>{part}</kbd>
                  </span>
                ))}
              </td>
              <td>{t(label)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Dialog>
  );
}
