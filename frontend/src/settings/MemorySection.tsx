// Settings → Memory: the switch that turns memory off for the user (the same setting as the
// library's), and a link to the library.
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "react-router";
import { api } from "../api/endpoints";
import { useApp } from "../app/context";
import { useT } from "../i18n";
import { keys } from "../queries";
import { fail } from "./util";

export function MemorySection() {
  const t = useT();
  const { me } = useApp();
  const qc = useQueryClient();
  const [on, setOn] = useState(me.settings.memory_enabled);
  // the switch moves at once and moves back if the server refuses
  const change = async (value: boolean) => {
    setOn(value);
    try {
      qc.setQueryData(keys.me, await api.patchMe({ memory_enabled: value }));
    } catch (e) {
      setOn(!value);
      fail(t, e);
    }
  };
  return (
    <section aria-labelledby="mem-h">
      <h2 id="mem-h">{t("memorySection")}</h2>
      <label className="switch-row">
        <input type="checkbox" role="switch" checked={on} onChange={(e) => change(e.target.checked)} />
        <span>{t("memorySwitch")}</span>
      </label>
      <p className="muted">{t("memorySectionHelp")}</p>
      <Link to="/memories">{t("openLibrary")}</Link>
    </section>
  );
}
