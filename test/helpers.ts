import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** A real temporary project on disk: files written as given, removed by `cleanup`. */
export function makeProject(files: Record<string, string | Buffer>, prefix = "codemem-test-"): { root: string; write: (rel: string, body: string | Buffer) => void; remove: (rel: string) => void; cleanup: () => void } {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  const write = (rel: string, body: string | Buffer) => {
    const abs = path.join(root, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, body);
  };
  for (const [rel, body] of Object.entries(files)) write(rel, body);
  return {
    root,
    write,
    remove: (rel) => fs.rmSync(path.join(root, rel), { force: true }),
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

/** Bumps a file's mtime so size+mtime change detection sees the edit even within one clock tick. */
export function touchLater(file: string): void {
  const t = new Date(Date.now() + 2000);
  fs.utimesSync(file, t, t);
}

export async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  try {
    await p;
  } catch (err) {
    if ((err as { code?: string }).code === code) return;
    throw new Error(`expected error code ${code}, got ${(err as { code?: string }).code}: ${(err as Error).message}`);
  }
  throw new Error(`expected error code ${code}, but it succeeded`);
}

export const PY_PROJECT: Record<string, string> = {
  "shop/__init__.py": '"""Shop package."""\n',
  "shop/models.py": `"""Domain models of the shop."""


class Entity:
    """Base of every stored thing."""

    def save(self):
        """Persist the entity."""
        return self.validate()

    def validate(self):
        return True


class Order(Entity):
    """A customer order with line items."""

    def total(self):
        """Sum of line prices including tax."""
        return apply_tax(sum(i.price for i in self.items))

    def checkout(self):
        self.save()
        return self.total()


def apply_tax(amount):
    """Add VAT to an amount."""
    return amount * 1.2
`,
  "shop/payments.py": `"""Payment processing."""
from shop.models import Order, apply_tax
from . import models


def charge_card(order: Order, card_number: str) -> bool:
    """Charge a credit card for an order, retrying on transient gateway errors."""
    amount = order.total()
    for attempt in range(3):
        if send_to_gateway(card_number, amount):
            return True
    return False


def send_to_gateway(card, amount):
    return amount > 0


def refund(order):
    models.apply_tax(0)
    return charge_card(order, "0000")
`,
};

/** The rowids of lexical hits, best first. */
export function rowids(hits: { rowid: number }[]): number[] {
  return hits.map((h) => h.rowid);
}
