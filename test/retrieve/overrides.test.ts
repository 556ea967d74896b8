import { describe, expect, it } from "vitest";
import { builtProject } from "./built-project.js";

// flask's shape: the base class documents the method, the subclass that implements it does not.
const FILES = {
  "web/scaffold.py": `class Scaffold:
    """Common behaviour of applications and blueprints."""

    def add_url_rule(self, rule, endpoint=None, view_func=None, **options):
        """Register a rule for routing incoming requests and building URLs.

        The route decorator is a shortcut to call this with the view function.
        """
        raise NotImplementedError

    def route(self, rule, **options):
        """Decorate a view function to register it with the given URL rule."""
        def decorator(f):
            self.add_url_rule(rule, None, f, **options)
            return f
        return decorator
`,
  "web/app.py": `from .scaffold import Scaffold


class App(Scaffold):
    """The central object."""

    def add_url_rule(self, rule, endpoint=None, view_func=None, **options):
        rule_obj = self.url_rule_class(rule, **options)
        self.url_map.add(rule_obj)
        if view_func is not None:
            self.view_functions[endpoint] = view_func

    def handle_request(self, environ):
        """Dispatch the request to the view registered for it."""
        return self.view_functions[environ["endpoint"]]()
`,
  "web/cli.py": `def routes_command(app):
    """Show all registered routes with endpoints and methods."""
    return sorted(app.url_map.iter_rules())
`,
};

const project = builtProject(FILES);

describe("overrides", () => {
  it("an undocumented override is found through the documented method it implements", async () => {
    const a = await project.engine().query({ project_path: project.root(), question: "where are URL routes registered", budget: 400 });
    expect(a.citations.map((c) => c.node_id)).toContain("web/app.py::App.add_url_rule");
  });
});
