import { describe, expect, it } from "vitest";
import { NameIndex, WEAK } from "../../dist/daemon/retrieve/mentions.js";
import type { CatalogNode } from "../../dist/daemon/store/types.js";

let rowid = 0;
function node(file_path: string, qualified_name: string, type = "function"): CatalogNode {
  const name = type === "module" ? qualified_name : qualified_name.split(".").pop()!;
  const id = type === "module" ? file_path : `${file_path}::${qualified_name}`;
  return { rowid: ++rowid, id, name, type, file_path, qualified_name, signature: "", docstring: "", description: "", line_start: 1, line_end: 2, language: "python", parent: null, community: 0 };
}

const index = new NameIndex([
  node("util/errors.py", "errors", "module"),
  node("util/errors.py", "EmptyError", "class"),
  node("util/errors.py", "create_error_class"),
  node("books/ledger.py", "ledger", "module"),
  node("books/ledger.py", "Ledger", "class"),
  node("books/ledger.py", "Ledger.post", "method"),
  node("crypto/x509.py", "X509Certificate", "class"),
]);
const strengths = (q: string) => Object.fromEntries(index.find(q).map((m) => [m.node.id, m.strength]));

describe("names in a question", () => {
  it("are sure when qualified, module-prefixed, backticked or called, and less so when merely code-shaped", () => {
    expect(strengths("How does Ledger.post round?")).toEqual({ "books/ledger.py::Ledger.post": 1 });
    expect(strengths("what does ledger.Ledger keep")).toEqual({ "books/ledger.py::Ledger": 1 });
    expect(strengths("what does `Ledger` keep")).toEqual({ "books/ledger.py::Ledger": 1 });
    expect(strengths("what happens when create_error_class() runs")).toEqual({ "util/errors.py::create_error_class": 1 });
    expect(strengths("how is the errors module laid out")).toEqual({ "util/errors.py": 1 });
    const bare = strengths("how are custom errors like EmptyError made to survive ES5 subclassing");
    expect(Object.keys(bare)).toEqual(["util/errors.py::EmptyError"]);
    expect(bare["util/errors.py::EmptyError"]).toBeGreaterThan(0);
    expect(bare["util/errors.py::EmptyError"]).toBeLessThan(1);
    // A word after a digit inside a name is code too.
    expect(Object.keys(strengths("where is an X509Certificate parsed"))).toEqual(["crypto/x509.py::X509Certificate"]);
    // A dotted prefix that names no module of the node is the weakest form.
    expect(strengths("what does bank.Ledger keep")["books/ledger.py::Ledger"]).toBeLessThan(bare["util/errors.py::EmptyError"]);
  });

  it("read Javadoc's Class#member as Class.member, and a Rust macro's call name!(…) as a call", () => {
    const jvm = new NameIndex([node("src/ClassName.java", "ClassName", "class"), node("src/ClassName.java", "ClassName.get", "method"), node("src/macros.rs", "error"), node("src/page.rs", "html")]);
    const found = (q: string) => Object.fromEntries(jvm.find(q).map((m) => [m.node.id, m.strength]));
    expect(found("Support anonymous inner classes in ClassName#get")).toEqual({ "src/ClassName.java::ClassName.get": 1 });
    expect(found("calling error!() with no argument fails")).toEqual({ "src/macros.rs::error": 1 });
    expect(found("error!{ x } and error![y]")).toEqual({ "src/macros.rs::error": 1 });
    // Prose: an exclamation before a space, a URL's anchor after a lower-case segment.
    expect(found("an error! (again)")).toEqual({});
    expect(found("see docs/index#html")).toEqual({});
  });

  it("read C++'s and Rust's Class::member as Class.member, within the namespaces that qualify it", () => {
    const cpp = new NameIndex([
      node("src/node.cpp", "YAML.Node", "class"),
      node("src/node.cpp", "YAML.Node.SetTag", "method"),
      node("src/emitter.cpp", "YAML.Emitter.SetTag", "method"),
      node("include/spdlog/logger.h", "spdlog.logger.set_formatter", "method"),
      node("include/spdlog/sinks/sink.h", "spdlog.sinks.sink.set_formatter", "method"),
    ]);
    const found = (q: string) => Object.fromEntries(cpp.find(q).map((m) => [m.node.id, m.strength]));
    // Before, `::` split the name: SetTag (code-shaped) named both methods, less surely.
    expect(found("emit secondary tag handles on Node::SetTag")).toEqual({ "src/node.cpp::YAML.Node.SetTag": 1 });
    expect(found("`logger::set_formatter` moves the formatter")).toEqual({ "include/spdlog/logger.h::spdlog.logger.set_formatter": 1 });
    expect(found("calling YAML::Node::SetTag twice")).toEqual({ "src/node.cpp::YAML.Node.SetTag": 1 });
  });

  it("count a class's constructors as the class: overloads do not make its name unspecific (RestSharp's RestClient)", () => {
    const ctors = Array.from({ length: 12 }, () => node("src/RestClient.cs", "RestClient.RestClient", "method")).map((n, i) => ({ ...n, id: `${n.id}#${i + 1}` }));
    const cs = new NameIndex([node("src/RestClient.cs", "RestClient", "class"), ...ctors, node("src/Options.cs", "Options.RestClientOptions", "method")]);
    const found = cs.find("`RestClient` disposes the handler it was given");
    expect(found.map((m) => m.node.id)).toContain("src/RestClient.cs::RestClient");
    expect(found.every((m) => m.strength === 1)).toBe(true);
    // Still, a name of more than SPECIFIC other nodes says nothing.
    const many = new NameIndex(Array.from({ length: 11 }, (_, i) => node(`src/m${i}.cs`, `M${i}.Dispose`, "method")));
    expect(many.find("`Dispose` throws")).toEqual([]);
  });

  it("name the type of a qualified member the index does not hold, not the namesakes of the member (fmt's basic_memory_buffer::move)", () => {
    const cpp = new NameIndex([
      node("include/fmt/format.h", "fmt.basic_memory_buffer", "class"),
      node("include/fmt/format.h", "fmt.basic_memory_buffer.grow", "method"),
      node("include/fmt/ranges.h", "fmt.range_formatter.move", "method"),
      node("include/fmt/args.h", "fmt.dynamic_arg_list.move", "method"),
    ]);
    const found = (q: string) => Object.fromEntries(cpp.find(q).map((m) => [m.node.id, m.strength]));
    expect(found("Fix `basic_memory_buffer::move` for a custom allocator")).toEqual({ "include/fmt/format.h::fmt.basic_memory_buffer": WEAK });
    expect(found("fix fmt::basic_memory_buffer::move")).toEqual({ "include/fmt/format.h::fmt.basic_memory_buffer": WEAK });
    // No such type: the member's namesakes, weakly, as before.
    expect(Object.keys(found("Fix `small_buffer::move`"))).toEqual(["include/fmt/ranges.h::fmt.range_formatter.move", "include/fmt/args.h::fmt.dynamic_arg_list.move"]);
  });

  it("read a name's bare uses as the one its qualified writing in the same text settles (gson's Map.put() … put(), RestSharp's ResponseStatus.TimedOut … ResponseStatus)", () => {
    const jvm = new NameIndex([
      node("src/LinkedTreeMap.java", "LinkedTreeMap", "class"),
      node("src/LinkedTreeMap.java", "LinkedTreeMap.put", "method"),
      node("src/JsonTreeWriter.java", "JsonTreeWriter.put", "method"),
      node("src/Enum.cs", "ResponseStatus", "enum"),
      node("src/Runner.java", "Runner.run", "method"),
    ]);
    const found = (q: string) => Object.fromEntries(jvm.find(q).map((m) => [m.node.id, m.strength]));
    // Another library's type (capitalised, not the project's) owns the put() the text calls afterwards.
    expect(found("Map.put() returns null, so the check after put() missed it")).toEqual({ "src/LinkedTreeMap.java::LinkedTreeMap.put": WEAK, "src/JsonTreeWriter.java::JsonTreeWriter.put": WEAK });
    // Before the qualified writing as after it.
    expect(found("check put() before Map.put()")["src/LinkedTreeMap.java::LinkedTreeMap.put"]).toBe(WEAK);
    // Alone, the call names the project's put()s surely, as before.
    expect(found("the check after put() missed it")["src/LinkedTreeMap.java::LinkedTreeMap.put"]).toBe(1);
    // A type named through a value the index does not hold is a setting, also where the text writes it bare.
    expect(found("contradicts ResponseStatus.TimedOut; all three (ResponseStatus, ErrorMessage) agree")).toEqual({ "src/Enum.cs::ResponseStatus": WEAK });
    // A lower-case qualifier the project lacks is a variable: it settles nothing.
    expect(found("runner.run() hangs, and run() is called twice")["src/Runner.java::Runner.run"]).toBe(1);
  });

  it("name an exception type alone in its file weakly: a report names what is thrown, the fix goes where (gson's JsonSyntaxException)", () => {
    const jvm = new NameIndex([
      node("src/JsonSyntaxException.java", "JsonSyntaxException", "module"),
      node("src/JsonSyntaxException.java", "JsonSyntaxException", "class"),
      node("src/JsonSyntaxException.java", "JsonSyntaxException.JsonSyntaxException", "method"),
      node("lib/plug/static.ex", "static", "module"),
      node("lib/plug/static.ex", "Plug.Static", "class"),
      node("lib/plug/static.ex", "Plug.Static.InvalidPathError", "class"),
      node("src/TypeAdapters.java", "TypeAdapters.LongAdapter", "class"),
    ]);
    const found = (q: string) => Object.fromEntries(jvm.find(q).map((m) => [m.node.id, m.strength]));
    expect(found("Throw JsonSyntaxException instead of NPE for a null element")).toEqual({
      "src/JsonSyntaxException.java": WEAK,
      "src/JsonSyntaxException.java::JsonSyntaxException": WEAK,
      "src/JsonSyntaxException.java::JsonSyntaxException.JsonSyntaxException": WEAK,
    });
    // One defined in a file of more (an Elixir module's exception) names that file as any type does.
    expect(found("routes with colons raise `InvalidPathError`")).toEqual({ "lib/plug/static.ex::Plug.Static.InvalidPathError": 1 });
    // Other code-shaped names are as before.
    expect(found("the `LongAdapter` reads it")).toEqual({ "src/TypeAdapters.java::TypeAdapters.LongAdapter": 1 });
  });

  it("read a language's global function written bare as the builtin, not the project's methods of that name (busted's handler.error for Lua's error())", () => {
    const lua = (file: string, q: string, type = "function") => ({ ...node(file, q, type), language: "lua" });
    const idx = new NameIndex([
      lua("busted/outputHandlers/junit.lua", "handler.error", "method"),
      lua("busted/outputHandlers/TAP.lua", "handler.error", "method"),
      lua("busted/core.lua", "busted.fail", "method"),
      lua("busted/compat.lua", "exit"),
      node("src/sessions.py", "Session.open", "method"),
      node("src/files.py", "open"),
    ]);
    const found = (q: string) => Object.fromEntries(idx.find(q).map((m) => [m.node.id, m.strength]));
    // Lua's error() and Python's open(): the language's own.
    expect(found("On Lua 5.3 `error()` is not silent: don't throw an error() to exit")).toEqual({});
    expect(found("why does open() of a session leak")).toEqual({ "src/files.py::open": 1 });
    // Qualified, the methods are named; a name no builtin has is named bare.
    expect(found("handler.error prints the trace")).toEqual({ "busted/outputHandlers/junit.lua::handler.error": 1, "busted/outputHandlers/TAP.lua::handler.error": 1 });
    expect(found("exit() and fail() on errors")).toEqual({ "busted/compat.lua::exit": 1, "busted/core.lua::busted.fail": 1 });
  });

  it("ignore prose words and other cases", () => {
    expect(strengths("how is a ledger posted")).toEqual({});
    expect(strengths("does LEDGER.POST round")).toEqual({});
    expect(strengths("an empty error")).toEqual({});
    expect(strengths("an IPv4 or 4Runner X509 certificate")).toEqual({});
  });
});

describe("a name index patched after a re-index", () => {
  it("forgets the nodes of a re-indexed file and finds its new ones, as one built afresh would", () => {
    const before = [node("pay/card.py", "card", "module"), node("pay/card.py", "charge_card"), node("pay/card.py", "Card.refund", "method"), node("pay/bank.py", "wire_funds")];
    const patched = new NameIndex(before);
    const after = [node("pay/card.py", "card", "module"), node("pay/card.py", "capture_card"), node("pay/card.py", "Card.refund", "method")];
    patched.remove(before.filter((n) => n.file_path === "pay/card.py"));
    patched.add(after);
    const fresh = new NameIndex([before[3], ...after]);
    for (const q of ["what does charge_card() do", "how does capture_card() work", "when is Card.refund called", "the card module", "and wire_funds()"]) {
      const ids = (ix: NameIndex) => ix.find(q).map((m) => `${m.node.id} ${m.strength}`);
      expect(ids(patched), q).toEqual(ids(fresh));
    }
    expect(patched.find("what does charge_card() do")).toEqual([]);
  });
});

describe("paths and stack-trace frames in a question", () => {
  it("name the file by its longest path suffix, and a frame the definition it ran", () => {
    const frame = strengths('Traceback (most recent call last):\n  File "/usr/lib/python3/site-packages/books/ledger.py", line 2, in post\n    raise ValueError');
    expect(frame["books/ledger.py"]).toBeGreaterThan(1);
    expect(frame["books/ledger.py::Ledger.post"]).toBe(frame["books/ledger.py"]);
    expect(Object.keys(strengths("it breaks in lib/util/errors.py:1 when run twice"))).toEqual(["util/errors.py", "util/errors.py::EmptyError"]);
    expect(Object.keys(strengths("see errors.py"))).toEqual(["util/errors.py"]);
    expect(strengths("see other/ledger.txt and nothing.py")).toEqual({});
    // A route through a script (PATH_INFO) or a directory with a dot in its name names no file (Slim's report on routing of /index.php/foo).
    expect(strengths("allow routing of /errors.py/foo again, as /app/errors.py/bar/baz did")).toEqual({});
    expect(Object.keys(strengths("see https://example.org/blob/1a2b/lib/util/errors.py#L12 and errors.py/"))).toEqual(["util/errors.py"]);
  });

  it("by a base name alone only weakly when the written directories disagree with the file's", () => {
    // rustc's `--> src/errors.py:4:5` of the reporter's own program; the project's file is util/errors.py.
    const own = strengths("error: cannot find macro\n --> src/errors.py:1:5\n");
    expect(own["util/errors.py"]).toBeGreaterThan(0);
    expect(own["util/errors.py"]).toBeLessThan(1);
    expect(own["util/errors.py::EmptyError"]).toBeUndefined();
    // A prefix beyond a directory that agrees is an installation's (site-packages, a registry's copy).
    expect(strengths("at /home/me/.cargo/registry/src/util/errors.py:1")["util/errors.py"]).toBeGreaterThan(1);
  });
});
