import { describe, expect, it } from "vitest";
import { builtProject } from "../index/fixture.js";

/** A C library whose header documents its functions and whose sources define them without comments. */
const PROJECT = {
  "include/ringbuf.h":
    "#ifndef RINGBUF_H\n#define RINGBUF_H\ntypedef struct ringbuf { char *data; int head; int tail; int cap; } ringbuf;\n\n/* Grows the circular buffer's capacity, copying wrapped bytes in order. */\nint ringbuf_reserve(ringbuf *rb, int cap);\n\n/* Drops every queued byte without freeing the storage. */\nvoid ringbuf_clear(ringbuf *rb);\n\n/* Number of queued bytes. */\nint ringbuf_len(const ringbuf *rb);\n#endif\n",
  "src/ringbuf.c":
    '#include "ringbuf.h"\n#include <stdlib.h>\n\nint ringbuf_reserve(ringbuf *rb, int cap) {\n  char *d = malloc(cap);\n  for (int i = 0; i < ringbuf_len(rb); i++) d[i] = rb->data[(rb->head + i) % rb->cap];\n  rb->data = d;\n  rb->cap = cap;\n  return 0;\n}\n\nvoid ringbuf_clear(ringbuf *rb) {\n  rb->head = rb->tail = 0;\n}\n\nint ringbuf_len(const ringbuf *rb) {\n  return (rb->tail - rb->head + rb->cap) % rb->cap;\n}\n',
  "src/main.c": '#include "ringbuf.h"\n\nint main(void) {\n  ringbuf rb = {0};\n  return ringbuf_reserve(&rb, 64);\n}\n',
};

describe("C prototypes in a header", () => {
  it("join their definitions (declares edges), and the header's words rank the definition, the header staying reachable", async () => {
    const { engine, root, edge, node } = await builtProject(PROJECT);
    expect(edge("include/ringbuf.h", "src/ringbuf.c::ringbuf_reserve", "declares")).toBe(true);
    expect(edge("include/ringbuf.h", "src/ringbuf.c::ringbuf_clear", "declares")).toBe(true);
    // Still one node per function, where its code is.
    expect(node("include/ringbuf.h::ringbuf_reserve")).toBeUndefined();

    // Words only the header's comment holds.
    const { results } = await engine.search({ project_path: root, query: "grow the circular buffer capacity copying wrapped bytes", limit: 10 });
    expect(results[0]).toMatchObject({ id: "src/ringbuf.c::ringbuf_reserve" });
    expect(results[0].via).toContain("declared");
    expect(results.map((r) => r.id)).toContain("include/ringbuf.h");
  });
});
