import { describe, expect, it } from "vitest";
import { builtFixture, builtProject } from "./fixture.js";

/**
 * Elixir on real code: 5 files of ExUnit from Elixir 1.14.0 (lib/ex_unit/lib: ex_unit.ex, and
 * ex_unit/filters.ex, failures_manifest.ex, runner_stats.ex, event_manager.ex), from the orig tarball
 * of Debian's source package elixir-lang 1.14.0.dfsg-2, with its LICENSE and NOTICE.
 */
const built = () => builtFixture("elixir-exunit");

describe("Elixir (ExUnit)", () => {
  it("extracts modules, structs and functions with qualified names, signatures, @doc and line ranges", async () => {
    const { result, node, g } = await built();
    expect(result.files_indexed).toBe(5);
    expect(result.unsupported).toEqual([]);
    const exunit = node("lib/ex_unit.ex::ExUnit");
    expect(exunit).toMatchObject({ type: "class", signature: "defmodule ExUnit", line_start: 1, line_end: 488 });
    expect(exunit.docstring).toMatch(/^Unit testing framework for Elixir\./);
    expect(node("lib/ex_unit.ex").docstring).toMatch(/^Unit testing framework for Elixir\./);
    // Nested modules are qualified by their parent; defstruct and defexception make a struct.
    expect(node("lib/ex_unit.ex::ExUnit.Test")).toMatchObject({ type: "struct", name: "Test", line_start: 88, line_end: 114, parent: "lib/ex_unit.ex::ExUnit" });
    expect(node("lib/ex_unit.ex::ExUnit.Test").docstring).toMatch(/^A struct that keeps information about the test\./);
    expect(node("lib/ex_unit.ex::ExUnit.TimeoutError")).toMatchObject({ type: "struct", line_start: 149 });
    expect(node("lib/ex_unit.ex::ExUnit.TimeoutError.message")).toMatchObject({ type: "method", parent: "lib/ex_unit.ex::ExUnit.TimeoutError" });
    // A def: its head and @spec, never its body; its @doc, dedented.
    const configure = node("lib/ex_unit.ex::ExUnit.configure");
    expect(configure).toMatchObject({ type: "method", qualified_name: "ExUnit.configure", signature: "def configure(options) when is_list(options); @spec configure(Keyword.t()) :: :ok", line_start: 309, line_end: 313, parent: "lib/ex_unit.ex::ExUnit" });
    expect(configure.docstring).toMatch(/^Configures ExUnit\.\n\n## Options\n/);
    // Clauses written together are one function: start/2 (@doc false) and start/1 (documented).
    expect(node("lib/ex_unit.ex::ExUnit.start")).toMatchObject({ signature: "def start(_type, [])", line_start: 172, line_end: 218 });
    expect(node("lib/ex_unit.ex::ExUnit.start").docstring).toMatch(/^Starts ExUnit and automatically runs tests/);
    expect(node("lib/ex_unit.ex::ExUnit.start#2")).toBeUndefined();
    expect(node("lib/ex_unit/filters.ex::ExUnit.Filters.has_tag")).toMatchObject({ type: "method", signature: expect.stringMatching(/^defp has_tag\(\{:line, line\}/), line_start: 202, line_end: 236 });
    expect(g.nodes.filter((n: any) => n.language === "elixir" && n.type === "method").length).toBe(55);
  });

  it("resolves aliases, module calls by alias or full name, local calls and pipes, and nothing by name alone", async () => {
    const { edge, g } = await built();
    // alias ExUnit.FailuresManifest: one import edge; alias ExUnit.{FailuresManifest, Test}: Test is nested in ExUnit, in ex_unit.ex.
    expect(edge("lib/ex_unit/filters.ex", "lib/ex_unit/failures_manifest.ex", "imports")).toBe(true);
    expect(g.edges.filter((e: any) => e.source === "lib/ex_unit/runner_stats.ex" && e.type === "imports").map((e: any) => e.target).sort()).toEqual(["lib/ex_unit.ex", "lib/ex_unit/failures_manifest.ex"]);
    // FailuresManifest.read(...) through the alias; &FailuresManifest.put_test(&1, test) inside a pipe.
    expect(edge("lib/ex_unit/filters.ex::ExUnit.Filters.failure_info", "lib/ex_unit/failures_manifest.ex::ExUnit.FailuresManifest.read")).toBe(true);
    expect(edge("lib/ex_unit/runner_stats.ex::ExUnit.RunnerStats.handle_cast", "lib/ex_unit/failures_manifest.ex::ExUnit.FailuresManifest.put_test")).toBe(true);
    // Local calls, in the module.
    expect(edge("lib/ex_unit/event_manager.ex::ExUnit.EventManager.suite_started", "lib/ex_unit/event_manager.ex::ExUnit.EventManager.notify")).toBe(true);
    expect(edge("lib/ex_unit/failures_manifest.ex::ExUnit.FailuresManifest.write!", "lib/ex_unit/failures_manifest.ex::ExUnit.FailuresManifest.prune_deleted_tests")).toBe(true);
    // Integer.parse and Supervisor.start_link are not ours: no edge to Filters.parse or EventManager.start_link.
    expect(edge("lib/ex_unit/filters.ex::ExUnit.Filters.extract_line_numbers", "lib/ex_unit/filters.ex::ExUnit.Filters.parse")).toBe(false);
    expect(g.edges.some((e: any) => e.source === "lib/ex_unit.ex::ExUnit.start" && e.target.startsWith("lib/ex_unit/event_manager.ex"))).toBe(false);
    // A typespec names its function: no call of it from the module.
    expect(edge("lib/ex_unit.ex::ExUnit", "lib/ex_unit.ex::ExUnit.configure")).toBe(false);
  });

  it("reads protocols, implementations, import, require, __MODULE__ and pipes in a small project", async () => {
    const price = [
      "defprotocol Shop.Priced do",
      '  @doc "The price of an item, in cents."',
      "  def price(item)",
      "end",
      "",
      "defmodule Shop.Price do",
      '  @moduledoc "Prices and their formatting."',
      "",
      '  @doc "Formats cents as a string."',
      "  @spec format(integer) :: String.t()",
      '  def format(cents) when cents < 100, do: "0.#{cents}"',
      '  def format(cents), do: "#{div(cents, 100)}.#{rem(cents, 100)}"',
      "",
      "  def total(items), do: items |> Enum.map(&Shop.Priced.price/1) |> sum()",
      "",
      "  defp sum(list), do: Enum.sum(list)",
      "end",
      "",
    ].join("\n");
    const cart = [
      "defmodule Shop.Cart do",
      "  alias Shop.Price, as: P",
      "  import Shop.Price, only: [total: 1]",
      "  require Logger",
      "",
      "  defstruct items: []",
      "",
      "  # Adds an item to the cart.",
      "  def add(%__MODULE__{items: items} = cart, item) do",
      "    %{cart | items: [item | items]}",
      "    |> log",
      "  end",
      "",
      "  def summary(cart), do: P.format(total(cart.items)) |> label()",
      "",
      '  def label(text), do: "Total: " <> __MODULE__.currency() <> text',
      "",
      '  def currency, do: "EUR "',
      "",
      "  defp log(cart) do",
      '    Logger.debug("cart")',
      "    cart",
      "  end",
      "",
      "  defimpl Shop.Priced do",
      "    def price(cart), do: Shop.Price.total(cart.items)",
      "  end",
      "end",
      "",
      "defimpl Shop.Priced, for: Map do",
      "  def price(map), do: Map.get(map, :price, 0)",
      "end",
      "",
    ].join("\n");
    const script = "import Shop.Price\n\ndefmodule Shop.Script do\n  def run, do: format(250)\nend\n";
    const { node, edge, g } = await builtProject({ "lib/shop/price.ex": price, "lib/shop/cart.ex": cart, "scripts/run.exs": script });
    expect(node("lib/shop/price.ex::Shop.Priced")).toMatchObject({ type: "interface", signature: "defprotocol Shop.Priced" });
    expect(node("lib/shop/price.ex::Shop.Priced.price")).toMatchObject({ type: "method", docstring: "The price of an item, in cents.", line_start: 3 });
    expect(node("lib/shop/price.ex::Shop.Price.format")).toMatchObject({ signature: "def format(cents) when cents < 100; @spec format(integer) :: String.t()", docstring: "Formats cents as a string.", line_start: 11, line_end: 12 });
    expect(node("lib/shop/cart.ex::Shop.Cart")).toMatchObject({ type: "struct" });
    expect(node("lib/shop/cart.ex::Shop.Cart.add")).toMatchObject({ docstring: "Adds an item to the cart.", signature: "def add(%__MODULE__{items: items} = cart, item)" });
    // defimpl inside a module adds to it; a top-level one prefixes its functions with the type.
    expect(node("lib/shop/cart.ex::Shop.Cart.price")).toMatchObject({ type: "method", parent: "lib/shop/cart.ex::Shop.Cart" });
    expect(node("lib/shop/cart.ex::Map.price")).toMatchObject({ type: "function", line_start: 31 });
    // alias, import and the .exs script's import: one edge per file and module; Logger is outside the project.
    expect(g.edges.filter((e: any) => e.source === "lib/shop/cart.ex" && e.type === "imports").map((e: any) => e.target)).toEqual(["lib/shop/price.ex"]);
    expect(edge("scripts/run.exs", "lib/shop/price.ex", "imports")).toBe(true);
    expect(edge("lib/shop/cart.ex::Shop.Cart.summary", "lib/shop/price.ex::Shop.Price.format")).toBe(true); // P.format
    expect(edge("lib/shop/cart.ex::Shop.Cart.summary", "lib/shop/price.ex::Shop.Price.total")).toBe(true); // import only: [total: 1]
    expect(edge("lib/shop/cart.ex::Shop.Cart.summary", "lib/shop/cart.ex::Shop.Cart.label")).toBe(true); // |> label()
    expect(edge("lib/shop/cart.ex::Shop.Cart.add", "lib/shop/cart.ex::Shop.Cart.log")).toBe(true); // |> log
    expect(edge("lib/shop/cart.ex::Shop.Cart.label", "lib/shop/cart.ex::Shop.Cart.currency")).toBe(true); // __MODULE__.currency()
    expect(edge("lib/shop/cart.ex::Shop.Cart.price", "lib/shop/price.ex::Shop.Price.total")).toBe(true); // by full name
    expect(edge("lib/shop/price.ex::Shop.Price.total", "lib/shop/price.ex::Shop.Price.sum")).toBe(true);
    expect(edge("scripts/run.exs::Shop.Script.run", "lib/shop/price.ex::Shop.Price.format")).toBe(true); // import Shop.Price, whole
  });

  it("answers a question about it", async () => {
    const { engine, root } = await built();
    const r = await engine.search({ project_path: root, query: "parse include and exclude filters given on the command line", limit: 5 });
    expect(r.results.map((x: any) => x.file_path)).toContain("lib/ex_unit/filters.ex");
  });
});
