"""Stateful property test of the conversation tree on SQLite and PostgreSQL.

Hypothesis drives random sequences of append / regenerate / edit-and-resend (a user sibling under
an older parent) / append under any message / edit / switch branch / delete a round / fork through
the HTTP API, against a small independent model of the tree. After every step, for the touched
conversation, the stored rows must match the model and:

- the parent links are acyclic and ``depth`` is a position: greater than the parent's (so never
  below the distance to the root), and exactly that distance on a path no round deletion
  touched; each jump pointer names an ancestor at its position, or a message that no longer
  exists anywhere (a round deletion leaves pointers into the round dangling);
- the active leaf is an existing message of the conversation (None only when it is empty), has
  no children, and equals the model's leaf;
- ``message_count`` equals the number of rows and ``last_message_at`` the newest ``created_at``;
- the active path read through the API is the model's path, with consistent sibling info.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import httpx
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test
from sqlalchemy import select

from chatmem.app import create_app
from chatmem.auth import service as auth_service
from chatmem.conversations import forks, tree_store
from chatmem.db import schema as t

from .conftest import make_settings

M = t.messages.c
C = t.conversations.c


@dataclass
class Node:
    parent: str | None
    role: str
    text: str
    seq: int


@dataclass
class Tree:
    """The model: what the conversation should hold, computed without the server's code."""

    nodes: dict[str, Node] = field(default_factory=dict)
    leaf: str | None = None
    skipped: bool = False  # a round deletion moved messages here (or into the path forked)

    def kids(self, mid: str | None) -> list[str]:
        return sorted(
            (k for k, n in self.nodes.items() if n.parent == mid), key=lambda k: self.nodes[k].seq
        )

    def subtree(self, mid: str) -> list[str]:
        out, todo = [], [mid]
        while todo:
            x = todo.pop()
            out.append(x)
            todo.extend(self.kids(x))
        return out

    def newest_leaf(self, among: list[str]) -> str | None:
        leaves = [x for x in among if not self.kids(x)]
        return max(leaves, key=lambda x: self.nodes[x].seq) if leaves else None

    def path(self) -> list[str]:
        out, x = [], self.leaf
        while x is not None:
            out.append(x)
            x = self.nodes[x].parent
        return out[::-1]

    def delete_round(self, target: str) -> set[str]:
        n = self.nodes[target]
        parent = self.nodes.get(n.parent) if n.parent else None
        question = (
            n.parent if (n.role == "assistant" and parent and parent.role == "user") else target
        )
        members = {question}
        if self.nodes[question].role == "user":
            members |= {k for k in self.kids(question) if self.nodes[k].role == "assistant"}
        new_parent = self.nodes[question].parent
        for m in members:
            for k in self.kids(m):
                if k not in members:
                    self.nodes[k].parent = new_parent
                    self.skipped = True
        for m in members:
            del self.nodes[m]
        if self.leaf in members:
            pool = self.subtree(new_parent) if new_parent else list(self.nodes)
            self.leaf = self.newest_leaf(pool)
        return members


class TreeMachine(RuleBasedStateMachine):
    ctx: dict = {}

    def run(self, coro):
        return self.ctx["loop"].run_until_complete(coro)

    def call(self, method: str, url: str, body=None, status: int = 200):
        r = self.run(self.ctx["client"].request(method, url, json=body))
        assert r.status_code == status, (method, url, body, r.status_code, r.text)
        return r.json() if r.content else None

    @initialize()
    def start(self):
        self.seq = 0
        self.trees: dict[str, Tree] = {}
        c = self.call("POST", "/api/conversations", {"title": "prop"}, 201)
        self.trees[c["id"]] = Tree()
        self.cid = c["id"]

    # ── helpers ────────────────────────────────────────────────────────────────────────────────

    def pick_conv(self, data) -> str:
        return data.draw(st.sampled_from(sorted(self.trees)), label="conversation")

    def pick_msg(self, data, cid: str, role: str | None = None) -> str | None:
        tree = self.trees[cid]
        ids = sorted(k for k, n in tree.nodes.items() if role is None or n.role == role)
        return data.draw(st.sampled_from(ids), label="message") if ids else None

    def append(self, cid: str, role: str, parent="leaf") -> dict:
        tree = self.trees[cid]
        self.seq += 1
        text = f"{role[0]}{self.seq}"
        body = {"content": text, "role": role, "generate": False}
        if parent != "leaf":
            body["parent_id"] = parent
            body["branch"] = True
        msg = self.call("POST", f"/api/conversations/{cid}/messages", body, 201)
        expected_parent = tree.leaf if parent == "leaf" else parent
        assert msg["parent_id"] == expected_parent
        tree.nodes[msg["id"]] = Node(expected_parent, role, text, self.seq)
        tree.leaf = msg["id"]
        self.check(cid)
        return msg

    # ── rules ──────────────────────────────────────────────────────────────────────────────────

    @rule(data=st.data(), role=st.sampled_from(["user", "assistant"]))
    def send(self, data, role):
        self.append(self.pick_conv(data), role)

    @rule(data=st.data())
    def turn(self, data):
        """The common shape: a question and its answer under the active leaf."""
        cid = self.pick_conv(data)
        self.append(cid, "user")
        self.append(cid, "assistant")

    @rule(data=st.data())
    def regenerate(self, data):
        cid = self.pick_conv(data)
        q = self.pick_msg(data, cid, "user")
        if q is not None:
            self.append(cid, "assistant", q)

    @rule(data=st.data())
    def edit_and_resend(self, data):
        cid = self.pick_conv(data)
        q = self.pick_msg(data, cid, "user")
        if q is not None:
            self.append(cid, "user", self.trees[cid].nodes[q].parent)  # None: a new root

    @rule(data=st.data(), role=st.sampled_from(["user", "assistant"]))
    def append_under_any(self, data, role):
        cid = self.pick_conv(data)
        m = self.pick_msg(data, cid)
        if m is not None:
            self.append(cid, role, m)

    @rule(data=st.data())
    def edit(self, data):
        cid = self.pick_conv(data)
        m = self.pick_msg(data, cid)
        if m is None:
            return
        self.seq += 1
        text = f"edited{self.seq}"
        out = self.call("PATCH", f"/api/conversations/{cid}/messages/{m}", {"content": text})
        assert out["text"] == text
        self.trees[cid].nodes[m].text = text
        self.check(cid)

    @rule(data=st.data())
    def switch(self, data):
        cid = self.pick_conv(data)
        m = self.pick_msg(data, cid)
        if m is None:
            return
        tree = self.trees[cid]
        out = self.call("PATCH", f"/api/conversations/{cid}/active-leaf", {"leaf_id": m})
        tree.leaf = tree.newest_leaf(tree.subtree(m))
        assert out["active_leaf_id"] == tree.leaf
        self.check(cid)

    @rule(data=st.data())
    def delete_round(self, data):
        cid = self.pick_conv(data)
        m = self.pick_msg(data, cid)
        if m is not None:
            self.delete_message(cid, m)

    def delete_message(self, cid: str, m: str) -> None:
        out = self.call("DELETE", f"/api/conversations/{cid}/messages/{m}")
        gone = self.trees[cid].delete_round(m)
        assert set(out["deleted_ids"]) == gone and out["deleted"] == len(gone)
        assert out["conversation"]["active_leaf_id"] == self.trees[cid].leaf
        self.check(cid)

    @rule(data=st.data())
    def delete_round_mid_path(self, data):
        """The usual delete: a round in the middle of the active path, with later turns below."""
        cid = self.pick_conv(data)
        tree = self.trees[cid]
        earlier = tree.path()[:-2]
        if earlier:
            self.delete_message(cid, data.draw(st.sampled_from(earlier), label="on path"))

    @rule(data=st.data())
    def fork(self, data):
        cid = self.pick_conv(data)
        src = self.trees[cid]
        out = self.call("POST", f"/api/conversations/{cid}/fork", {}, 201)
        self.run(forks.copies_done())  # the copy runs after the answer (conversations/forks.py)
        copy = Tree(skipped=src.skipped)
        prev = None
        for mid in src.path():
            n = src.nodes[mid]
            self.seq += 1
            copy.nodes[f"pending{self.seq}"] = Node(prev, n.role, n.text, self.seq)
            prev = f"pending{self.seq}"
        # adopt the server's ids: the fork is a chain in path order
        rows = self.db_rows(out["id"])[0]
        by_depth = sorted(rows, key=lambda r: r.depth)
        assert not rows or by_depth[0].depth == 0  # a copy's root is at position 0
        mapping = dict(
            zip(
                sorted(copy.nodes, key=lambda k: copy.nodes[k].seq),
                (r.id for r in by_depth),
                strict=False,
            )
        )
        assert len(mapping) == len(rows)
        copy.nodes = {
            mapping[k]: Node(mapping.get(n.parent), n.role, n.text, n.seq)
            for k, n in copy.nodes.items()
        }
        copy.leaf = mapping[prev] if prev else None
        self.trees[out["id"]] = copy
        self.check(out["id"])
        self.check(cid)

    # ── the invariants ─────────────────────────────────────────────────────────────────────────

    def db_rows(self, cid: str):
        async def read():
            async with self.ctx["db"].read() as c:
                rows = (
                    await c.execute(
                        select(
                            M.id,
                            M.parent_id,
                            M.depth,
                            M.role,
                            M.search_text,
                            M.created_at,
                            M.jump_id,
                            M.jump_depth,
                        ).where(M.conversation_id == cid)
                    )
                ).all()
                conv = (
                    await c.execute(
                        select(C.active_leaf_id, C.message_count, C.last_message_at).where(
                            C.id == cid
                        )
                    )
                ).one()
            return rows, conv

        return self.run(read())

    def existing(self, ids: set[str]) -> list[str]:
        async def read():
            async with self.ctx["db"].read() as c:
                q = select(M.id).where(M.id.in_(sorted(ids)))
                return list((await c.execute(q)).scalars())

        return self.run(read()) if ids else []

    def newest_leaves(self, cid: str, ids: list[str], by_id: dict):
        async def compare():
            async with self.ctx["db"].read() as c:
                for mid in ids:
                    fast = await tree_store.newest_by_jumps(c, cid, mid, by_id[mid].depth)
                    walk = await tree_store.newest_descendant_walk(c, cid, mid)
                    assert fast == walk, (mid, fast, walk)
            return True

        return compare()

    def check(self, cid: str) -> None:
        tree = self.trees[cid]
        rows, conv = self.db_rows(cid)
        by_id = {r.id: r for r in rows}
        # matches the model
        assert {r.id: (r.parent_id, r.role, r.search_text) for r in rows} == {
            k: (n.parent, n.role, n.text) for k, n in tree.nodes.items()
        }
        # acyclic; depth a position growing from parent to child (exact where nothing was
        # deleted: tree.skipped says whether a deletion ever moved messages in this conversation)
        dangling = set()
        for r in rows:
            seen, x, dist = set(), r, 0
            while x.parent_id is not None:
                assert x.id not in seen, "cycle"
                seen.add(x.id)
                assert by_id[x.parent_id].depth < x.depth, (x.id, x.depth)
                x = by_id[x.parent_id]  # parents are rows of this conversation
                dist += 1
            assert r.depth >= dist and (tree.skipped or r.depth == dist), (r.id, r.depth, dist)
            # the jump pointer: an ancestor at its position (what switching relies on), or a
            # message that is gone (the walk then takes the parent)
            if r.jump_id is not None:
                above = (seen - {r.id}) | {x.id}  # x is the root
                if r.jump_id in above:
                    assert by_id[r.jump_id].depth == r.jump_depth, r
                else:
                    assert tree.skipped and r.jump_id not in by_id, r
                    dangling.add(r.jump_id)
        assert not self.existing(dangling), "a dangling pointer names a live message"
        # the newest-leaf search over the pointers answers as the full walk of the subtree, for a
        # spread of up to 8 messages per check (every message at every step made this test the
        # suite's slowest; across the run's steps every shape is still compared)
        ids = [r.id for r in rows]
        assert self.run(self.newest_leaves(cid, ids[:: max(1, len(ids) // 8)], by_id))
        # the active leaf
        if rows:
            assert conv.active_leaf_id in by_id
            assert not any(r.parent_id == conv.active_leaf_id for r in rows), "leaf has children"
        else:
            assert conv.active_leaf_id is None
        assert conv.active_leaf_id == tree.leaf
        # counters
        assert conv.message_count == len(rows)
        assert conv.last_message_at == (max(r.created_at for r in rows) if rows else None)
        # the active path through the API, with sibling info
        page = self.call("GET", f"/api/conversations/{cid}/messages?limit=200")
        items = page["items"]
        assert [m["id"] for m in items] == tree.path()
        for m in items:
            sibs = tree.kids(tree.nodes[m["id"]].parent)
            assert m["sibling_ids"] == sibs and m["branch_count"] == len(sibs)
            assert (
                m["branch_index"] == sibs.index(m["id"]) and m["text"] == tree.nodes[m["id"]].text
            )


def test_tree_state_machine(db_url, tmp_path):
    loop = asyncio.new_event_loop()
    app = create_app(make_settings(db_url))
    rt = app.state.runtime
    try:
        _user, key = loop.run_until_complete(auth_service.create_user(rt.db, "prop@example.com"))
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://test",
            headers={"Authorization": f"Bearer {key}"},
        )
        machine = type(
            "Tree", (TreeMachine,), {"ctx": {"loop": loop, "client": client, "db": rt.db}}
        )
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=40,
                stateful_step_count=25,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
            ),
        )
        loop.run_until_complete(client.aclose())
    finally:
        loop.run_until_complete(rt.db.dispose())
        loop.close()
