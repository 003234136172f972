// Admin → Users: the list; create a user; make admin or not, disable or enable; reset a
// password or make a one-time login link.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { con, type AdminUser } from "../api/console";
import { useApp } from "../app/context";
import { useT } from "../i18n";
import { fail, when } from "../settings/util";
import { Dialog } from "../ui/Dialog";
import { toast } from "../ui/toast";
import { Guard } from "./Guard";

const USERS = ["admin", "users"];

function CreateUser() {
  const t = useT();
  const qc = useQueryClient();
  const submit = async (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    try {
      await con.createUser({
        email: String(f.get("email")),
        name: String(f.get("name") || ""),
        password: String(f.get("password") || "") || null,
        admin: f.get("admin") === "on",
      });
      form.reset();
      qc.invalidateQueries({ queryKey: USERS });
      toast(t("saved"));
    } catch (err) {
      fail(t, err);
    }
  };
  return (
    <form className="admin-create" onSubmit={submit} aria-label={t("createUser")}>
      <label>
        <span>{t("email")}</span>
        <input name="email" type="email" required maxLength={320} />
      </label>
      <label>
        <span>{t("userName")}</span>
        <input name="name" maxLength={120} />
      </label>
      <label>
        <span>{t("userPasswordOptional")}</span>
        <input name="password" type="password" minLength={8} autoComplete="new-password" />
      </label>
      <label className="radio">
        <input name="admin" type="checkbox" /> {t("userMakeAdmin")}
      </label>
      <button type="submit" className="primary">
        {t("createUser")}
      </button>
    </form>
  );
}

function UserRow({ u, onPassword, onLink }: { u: AdminUser; onPassword: () => void; onLink: () => void }) {
  const t = useT();
  const qc = useQueryClient();
  const { me } = useApp();
  const self = u.id === me.id;
  const patch = async (body: { role?: string; disabled?: boolean }) => {
    try {
      await con.patchUser(u.id, body);
      qc.invalidateQueries({ queryKey: USERS });
    } catch (e) {
      fail(t, e);
    }
  };
  return (
    <li className={`user-row ${u.disabled ? "disabled" : ""}`} data-email={u.email}>
      <div className="user-main">
        <strong>{u.name}</strong> <span className="muted">{u.email}</span>
        <span className="muted small">
          {u.role === "admin" ? t("roleAdmin") : t("roleUser")}
          {u.disabled ? ` · ${t("disabledWord")}` : ""} · {when(u.created_at)}
        </span>
      </div>
      <div className="user-actions">
        <button type="button" disabled={self} onClick={() => patch({ role: u.role === "admin" ? "user" : "admin" })}>
          {u.role === "admin" ? t("makeUser") : t("makeAdmin")}
        </button>
        <button type="button" disabled={self} onClick={() => patch({ disabled: !u.disabled })}>
          {u.disabled ? t("enable") : t("disable")}
        </button>
        <button type="button" onClick={onPassword}>
          {t("resetPassword")}
        </button>
        <button type="button" onClick={onLink}>
          {t("loginLink")}
        </button>
      </div>
    </li>
  );
}

function PasswordDialog({ u, onClose }: { u: AdminUser; onClose: () => void }) {
  const t = useT();
  const [pw, setPw] = useState("");
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    try {
      await con.setPassword(u.id, pw);
      toast(t("passwordReset"));
      onClose();
    } catch (err) {
      fail(t, err);
    }
  };
  return (
    <Dialog open onClose={onClose} title={t("resetPassword")}>
      <form className="stack-form" onSubmit={submit}>
        <label>
          <span>{t("newPasswordFor", { email: u.email })}</span>
          <input data-autofocus type="password" minLength={8} required value={pw} autoComplete="new-password" onChange={(e) => setPw(e.target.value)} />
        </label>
        <button type="submit" className="primary">
          {t("resetPassword")}
        </button>
      </form>
    </Dialog>
  );
}

export function UsersSection() {
  const t = useT();
  const q = useQuery({ queryKey: USERS, queryFn: con.users });
  const [pwFor, setPwFor] = useState<AdminUser | null>(null);
  const [link, setLink] = useState<{ email: string; url: string } | null>(null);
  const makeLink = async (u: AdminUser) => {
    try {
      setLink({ email: u.email, url: (await con.loginLink(u.id)).url });
    } catch (e) {
      fail(t, e);
    }
  };
  return (
    <Guard q={q}>
      {(d) => (
        <section aria-label={t("users")}>
          <CreateUser />
          <ul className="user-list">
            {d.items.map((u) => (
              <UserRow key={u.id} u={u} onPassword={() => setPwFor(u)} onLink={() => makeLink(u)} />
            ))}
          </ul>
          {pwFor && <PasswordDialog u={pwFor} onClose={() => setPwFor(null)} />}
          {link && (
            <Dialog open onClose={() => setLink(null)} title={t("loginLink")}>
              <p>{t("loginLinkFor", { email: link.email })}</p>
              <code className="secret">{link.url}</code>
            </Dialog>
          )}
        </section>
      )}
    </Guard>
  );
}
