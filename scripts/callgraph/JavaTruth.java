// Ground truth for Java: javac's own resolution of every call of a tree (the JDK's jdk.compiler module).
//
// Usage: java -cp DIR JavaTruth TREE [CLASSPATH]  -> the truth as JSON on stdout (the shape of truth.mjs).
// Every .java file of the tree (sources and tests) is parsed and attributed in one JavacTask; a
// dependency that is not on CLASSPATH leaves its types erroneous: calls through them are 'unknown',
// the packages not found are listed, and errors are counted, not fatal (attribution goes on past them).
// A method declared in a class inside a method (local or anonymous) is no def: its calls count for the
// outermost method, as codemem's extractor counts them. The static target is the truth: a call of an
// abstract or interface method is 'dispatch'; a call of a concrete method that a project class
// overrides is 'project' with the declared target, and counted apart (static_target_overridden).
import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.regex.*;
import java.util.stream.*;
import javax.lang.model.element.*;
import javax.lang.model.type.*;
import javax.lang.model.util.*;
import javax.tools.*;

public class JavaTruth {
  static final StringBuilder defsJson = new StringBuilder();
  static final StringBuilder sitesJson = new StringBuilder();
  static final Map<Element, Integer> defIndex = new HashMap<>();
  static final Set<Element> overridden = new HashSet<>();
  static int defCount, siteCount, unknown, overriddenCalls;
  static Path tree;
  static Trees trees;
  static Elements elements;
  static Types types;

  public static void main(String[] args) throws IOException {
    long t0 = System.nanoTime();
    tree = Paths.get(args[0]).toAbsolutePath().normalize();
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    if (javac == null) throw new IllegalStateException("no system Java compiler: install a JDK with the jdk.compiler module");
    List<Path> files = sources(tree);
    int errors[] = {0};
    Set<String> notFound = new TreeSet<>();
    Pattern missingPackage = Pattern.compile("package (\\S+) does not exist");
    DiagnosticListener<JavaFileObject> diags = d -> {
      if (d.getKind() != Diagnostic.Kind.ERROR) return;
      errors[0]++;
      Matcher m = missingPackage.matcher(d.getMessage(Locale.ROOT));
      if ("compiler.err.doesnt.exist".equals(d.getCode()) && m.find() && onImport(d)) notFound.add(m.group(1));
    };
    StandardJavaFileManager fm = javac.getStandardFileManager(diags, Locale.ROOT, StandardCharsets.UTF_8);
    List<String> options = new ArrayList<>(List.of("-proc:none", "-implicit:none", "-encoding", "UTF-8", "-Xmaxerrs", "1000000",
        // Attribute every file even when some have errors (missing dependencies), whatever the default policy.
        "-XDshould-stop.ifError=FLOW", "-XDshould-stop.at=FLOW", "-sourcepath", ""));
    if (args.length > 1 && !args[1].isEmpty()) options.addAll(List.of("-classpath", args[1]));
    JavacTask task = (JavacTask) javac.getTask(null, fm, diags, options, null, fm.getJavaFileObjectsFromPaths(files));
    trees = Trees.instance(task);
    elements = task.getElements();
    types = task.getTypes();
    Iterable<? extends CompilationUnitTree> units = task.parse();
    task.analyze();
    for (CompilationUnitTree cu : units) new Overrides().scan(cu, null);
    for (CompilationUnitTree cu : units) new Calls(cu).scan(cu, -1);
    StringBuilder out = new StringBuilder("{\"language\":\"java\",\"tool\":");
    str(out, "javac " + System.getProperty("java.version"));
    out.append(",\"coverage\":{\"seconds\":").append((System.nanoTime() - t0) / 1e9).append(",\"files\":").append(files.size())
        .append(",\"calls\":").append(siteCount).append(",\"unknown\":").append(unknown).append(",\"errors\":").append(errors[0])
        .append(",\"static_target_overridden\":").append(overriddenCalls).append(",\"imports_not_found\":[")
        .append(notFound.stream().map(JavaTruth::quoted).collect(Collectors.joining(","))).append("]}");
    out.append(",\"defs\":[").append(defsJson).append("],\"sites\":[").append(sitesJson).append("]}\n");
    System.out.print(out);
  }

  /**
   * The tree's .java files, sorted; module-info.java is left out (the tree is compiled as one unnamed
   * module) and so is a second file of the same package and name (a multi-release overlay such as
   * src/main/java11): javac would reject the duplicate class.
   */
  static List<Path> sources(Path tree) throws IOException {
    List<Path> all;
    try (Stream<Path> s = Files.walk(tree)) {
      all = s.filter(p -> p.toString().endsWith(".java") && !p.getFileName().toString().equals("module-info.java"))
          .filter(p -> !hidden(tree.relativize(p))).sorted().collect(Collectors.toList());
    }
    Pattern pkg = Pattern.compile("^\\s*package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
    Set<String> seen = new HashSet<>();
    List<Path> out = new ArrayList<>();
    for (Path p : all) {
      Matcher m = pkg.matcher(Files.readString(p, StandardCharsets.UTF_8));
      if (seen.add((m.find() ? m.group(1) : "") + "." + p.getFileName())) out.add(p);
    }
    return out;
  }

  /** True when a diagnostic is about an import (not a qualified name in the code that javac took for a package). */
  static boolean onImport(Diagnostic<? extends JavaFileObject> d) {
    try {
      CharSequence text = d.getSource().getCharContent(true);
      int start = (int) d.getPosition();
      while (start > 0 && text.charAt(start - 1) != '\n') start--;
      return text.subSequence(start, Math.min(text.length(), start + 7)).toString().startsWith("import");
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  static boolean hidden(Path rel) {
    for (Path part : rel) if (part.toString().startsWith(".")) return true;
    return false;
  }

  /** True when the method at `p` is a def: every tree around it is a class, up to the file (no method, block or `new` body). */
  static boolean topLevel(TreePath p) {
    for (TreePath q = p.getParentPath(); q != null; q = q.getParentPath()) {
      Tree t = q.getLeaf();
      if (t instanceof CompilationUnitTree) return true;
      if (!(t instanceof ClassTree) || q.getParentPath().getLeaf() instanceof NewClassTree) return false;
    }
    return false;
  }

  /** A constructor javac adds (the default one, a record's canonical one) has no source of its own. */
  static boolean written(ExecutableElement e) {
    return elements.getOrigin(e) == Elements.Origin.EXPLICIT;
  }

  /** The index of the def declared by method element `e` (found on first sight), or -1 when it is not in the tree. */
  static int defOf(ExecutableElement e) {
    Integer i = defIndex.get(e);
    if (i != null) return i;
    TreePath p = trees.getPath(e);
    if (p == null || !(p.getLeaf() instanceof MethodTree) || !written(e)) return -1;
    MethodTree m = (MethodTree) p.getLeaf();
    CompilationUnitTree cu = p.getCompilationUnit();
    SourcePositions sp = trees.getSourcePositions();
    LineMap lines = cu.getLineMap();
    long start = sp.getStartPosition(cu, m), end = sp.getEndPosition(cu, m);
    if (start < 0 || end < 0) return -1;
    boolean ctor = e.getKind() == ElementKind.CONSTRUCTOR;
    String cls = e.getEnclosingElement().getSimpleName().toString();
    String name = ctor ? cls : m.getName().toString();
    // The name comes after the modifiers, type parameters and return type.
    long after = Math.max(sp.getEndPosition(cu, m.getModifiers()), start);
    if (m.getReturnType() != null) after = Math.max(after, sp.getEndPosition(cu, m.getReturnType()));
    for (Tree tp : m.getTypeParameters()) after = Math.max(after, sp.getEndPosition(cu, tp));
    long namePos = start;
    try {
      int at = cu.getSourceFile().getCharContent(true).toString().indexOf(name, (int) after);
      if (at >= 0 && at < end) namePos = at;
    } catch (IOException ignored) {
      // The name line stays the first line.
    }
    defsJson.append(defCount == 0 ? "" : ",").append("{\"file\":");
    str(defsJson, tree.relativize(Paths.get(cu.getSourceFile().toUri())).toString().replace('\\', '/'));
    defsJson.append(",\"name\":");
    str(defsJson, name);
    defsJson.append(",\"line\":").append(lines.getLineNumber(start)).append(",\"nameLine\":").append(lines.getLineNumber(namePos))
        .append(",\"endLine\":").append(lines.getLineNumber(end)).append(",\"kind\":\"").append(ctor ? "constructor" : "method").append('"');
    if (ctor) {
      defsJson.append(",\"cls\":");
      str(defsJson, cls);
    }
    defsJson.append('}');
    defIndex.put(e, defCount);
    return defCount++;
  }

  /** Marks every method of the tree that a method of the tree overrides. */
  static class Overrides extends TreePathScanner<Void, Void> {
    @Override
    public Void visitMethod(MethodTree m, Void v) {
      Element e = trees.getElement(getCurrentPath());
      if (e instanceof ExecutableElement && e.getEnclosingElement() instanceof TypeElement && e.getKind() == ElementKind.METHOD) {
        TypeElement owner = (TypeElement) e.getEnclosingElement();
        for (TypeMirror sup : supertypes(owner.asType(), new ArrayList<>())) {
          if (!(sup instanceof DeclaredType)) continue;
          for (Element s : ((DeclaredType) sup).asElement().getEnclosedElements()) {
            if (s.getKind() == ElementKind.METHOD && s.getSimpleName().equals(e.getSimpleName()) && elements.overrides((ExecutableElement) e, (ExecutableElement) s, owner)) overridden.add(s);
          }
        }
      }
      return super.visitMethod(m, v);
    }

    static List<TypeMirror> supertypes(TypeMirror t, List<TypeMirror> acc) {
      for (TypeMirror s : types.directSupertypes(t)) {
        if (s.getKind() == TypeKind.ERROR || acc.stream().anyMatch(a -> types.isSameType(a, s))) continue;
        acc.add(s);
        supertypes(s, acc);
      }
      return acc;
    }
  }

  /** Records the call sites made inside defs: method invocations, `new`, `this(...)` and `super(...)`. */
  static class Calls extends TreePathScanner<Void, Integer> {
    final CompilationUnitTree cu;

    Calls(CompilationUnitTree cu) {
      this.cu = cu;
    }

    @Override
    public Void visitMethod(MethodTree m, Integer caller) {
      // A method without a body (abstract, an interface's, an annotation's element) makes no calls: no def.
      if (m.getBody() != null && topLevel(getCurrentPath())) {
        Element e = trees.getElement(getCurrentPath());
        caller = e instanceof ExecutableElement ? defOf((ExecutableElement) e) : -1;
      }
      return super.visitMethod(m, caller);
    }

    @Override
    public Void visitMethodInvocation(MethodInvocationTree call, Integer caller) {
      if (caller >= 0) {
        ExpressionTree sel = call.getMethodSelect();
        Element e = trees.getElement(getCurrentPath());
        String name, kind;
        if (sel instanceof IdentifierTree) {
          name = ((IdentifierTree) sel).getName().toString();
          if (name.equals("super") || name.equals("this")) {
            kind = "constructor";
            if (name.equals("this") && e != null) name = e.getEnclosingElement().getSimpleName().toString();
          } else {
            kind = e != null && e.getModifiers().contains(Modifier.STATIC) && !encloses(e.getEnclosingElement(), getCurrentPath()) ? "imported" : "plain";
          }
        } else if (sel instanceof MemberSelectTree) {
          MemberSelectTree ms = (MemberSelectTree) sel;
          name = ms.getIdentifier().toString();
          ExpressionTree recv = ms.getExpression();
          String r = recv.toString();
          Element re = trees.getElement(new TreePath(getCurrentPath(), recv));
          kind = r.equals("this") || r.endsWith(".this") ? "this"
              : r.equals("super") || r.endsWith(".super") ? "constructor"
              : re instanceof TypeElement ? "imported" : "method";
        } else {
          name = sel.toString();
          kind = "method";
        }
        site(caller, name, kind, call, e);
      }
      return super.visitMethodInvocation(call, caller);
    }

    @Override
    public Void visitNewClass(NewClassTree call, Integer caller) {
      if (caller >= 0) {
        String name = call.getIdentifier().toString().replaceAll("<.*", "").replaceAll(".*\\.", "").replaceAll("@\\S+\\s+", "").trim();
        Element e = trees.getElement(getCurrentPath());
        if (call.getClassBody() != null) e = anonymousSuper(call);
        site(caller, name, "constructor", call, e);
      }
      return super.visitNewClass(call, caller);
    }

    /** `new C(args) { ... }` runs C's constructor: the only one C declares, else it cannot be told here (null). */
    ExecutableElement anonymousSuper(NewClassTree call) {
      Element t = trees.getElement(new TreePath(getCurrentPath(), call.getIdentifier()));
      if (!(t instanceof TypeElement)) return null;
      List<ExecutableElement> ctors = ElementFilter.constructorsIn(t.getEnclosedElements());
      if (t.getKind().isInterface() || ctors.size() == 1) return t.getKind().isInterface() ? null : ctors.get(0);
      return null;
    }

    /** True when `owner` is a class around the call (its own methods are in scope without an import). */
    boolean encloses(Element owner, TreePath at) {
      for (TreePath q = at; q != null; q = q.getParentPath()) {
        if (q.getLeaf() instanceof ClassTree && owner.equals(trees.getElement(q))) return true;
      }
      // An inherited method is in scope too.
      for (TreePath q = at; q != null; q = q.getParentPath()) {
        if (q.getLeaf() instanceof ClassTree) {
          Element c = trees.getElement(q);
          if (c instanceof TypeElement && owner instanceof TypeElement && types.isSubtype(types.erasure(c.asType()), types.erasure(owner.asType()))) return true;
        }
      }
      return false;
    }

    void site(int caller, String name, String kind, Tree call, Element e) {
      String status;
      int target = -1;
      boolean anonymousOfInterface = call instanceof NewClassTree && ((NewClassTree) call).getClassBody() != null && e == null && isInterface(((NewClassTree) call).getIdentifier());
      if (anonymousOfInterface) {
        status = "outside";
      } else if (!(e instanceof ExecutableElement) || e.asType().getKind() == TypeKind.ERROR || e.getEnclosingElement().asType().getKind() == TypeKind.ERROR) {
        status = "unknown";
      } else {
        ExecutableElement x = (ExecutableElement) e;
        TreePath p = trees.getPath(x);
        if (x.getModifiers().contains(Modifier.ABSTRACT)) {
          status = "dispatch";
        } else if (p == null || !written(x)) {
          status = "outside"; // the JDK, a dependency, a class without a constructor of its own
        } else if (!topLevel(p)) {
          status = "local";
        } else {
          status = "project";
          target = defOf(x);
          if (overridden.contains(x)) overriddenCalls++;
        }
      }
      if (status.equals("unknown")) unknown++;
      SourcePositions sp = trees.getSourcePositions();
      sitesJson.append(siteCount++ == 0 ? "" : ",").append("{\"caller\":").append(caller).append(",\"name\":");
      str(sitesJson, name);
      sitesJson.append(",\"kind\":\"").append(kind).append("\",\"line\":").append(cu.getLineMap().getLineNumber(sp.getStartPosition(cu, call)))
          .append(",\"status\":\"").append(status).append('"');
      if (target >= 0) sitesJson.append(",\"target\":").append(target);
      sitesJson.append('}');
    }

    boolean isInterface(Tree type) {
      Element t = trees.getElement(new TreePath(getCurrentPath(), type));
      return t != null && t.getKind().isInterface();
    }
  }

  static String quoted(String s) {
    StringBuilder b = new StringBuilder();
    str(b, s);
    return b.toString();
  }

  static void str(StringBuilder b, String s) {
    b.append('"');
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    b.append('"');
  }
}
