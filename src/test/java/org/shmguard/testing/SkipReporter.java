package org.shmguard.testing;

import java.io.PrintStream;
import java.util.Collections;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.ClassSelector;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.LauncherDiscoveryListener;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Says on the console, not only in the XML reports, why a test did not run: each disabled or
 * assumption-skipped test or class with its reason, and each test class that ran no test at all
 * (a class surefire selected in which JUnit found no test, or whose tests were all filtered out).
 * Registered for every run through META-INF/services (as a TestExecutionListener and a
 * LauncherDiscoveryListener: the classes asked for are known only at discovery), so
 * {@code mvn -q test} shows them too.
 *
 * <pre>
 * SKIPPED PackagesTest.lintianFindsNoErrors: /usr/bin/lintian is not installed (.ci/run installs it)
 * NO TESTS RAN in SomeTest
 * </pre>
 */
public final class SkipReporter implements TestExecutionListener, LauncherDiscoveryListener {
  /** Test classes selected by any discovery of this JVM, and those that ran a test: the two roles are two instances. */
  private static final Set<String> SELECTED = Collections.synchronizedSet(new TreeSet<>());
  private static final Set<String> RAN = Collections.synchronizedSet(new TreeSet<>());

  private final PrintStream out = System.out;
  private TestPlan plan;

  @Override
  public void launcherDiscoveryStarted(LauncherDiscoveryRequest request) {
    request.getSelectorsByType(ClassSelector.class).forEach(c -> SELECTED.add(c.getClassName()));
  }

  @Override
  public void testPlanExecutionStarted(TestPlan testPlan) {
    plan = testPlan;
  }

  @Override
  public void executionStarted(TestIdentifier id) {
    if (id.isTest()) {
      accountFor(id);
    }
  }

  /** Marks {@code id}'s class and every class around it (a @Nested class's tests count for its outer class). */
  private void accountFor(TestIdentifier id) {
    for (Optional<TestIdentifier> p = Optional.of(id); p.isPresent(); p = plan.getParent(p.get())) {
      p.get().getSource().filter(ClassSource.class::isInstance).ifPresent(c -> RAN.add(((ClassSource) c).getClassName()));
    }
  }

  /**
   * Surefire discovers each class on its own, drops those without a test to run, then runs the
   * rest in one plan: once that plan is over, a class it selected and that ran nothing was dropped.
   */
  @Override
  public void testPlanExecutionFinished(TestPlan testPlan) {
    synchronized (SELECTED) {
      for (String c : SELECTED) {
        if (!RAN.contains(c)) {
          say("NO TESTS RAN in " + simple(c) + ": no test in it was found or left by the filters");
        }
      }
      SELECTED.clear();
      RAN.clear();
    }
  }

  @Override
  public void executionSkipped(TestIdentifier id, String reason) {
    say("SKIPPED " + name(id) + ": " + reason);
    accountFor(id); // said why: not a class that ran nothing without a word
  }

  @Override
  public void executionFinished(TestIdentifier id, TestExecutionResult result) {
    if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
      say("SKIPPED " + name(id) + ": " + result.getThrowable().map(Throwable::getMessage).orElse("aborted"));
    }
  }

  private void say(String line) {
    out.println(line);
    out.flush();
  }

  /** "ClassName.method" or "ClassName": short enough to read, exact enough to run with -Dtest. */
  private static String name(TestIdentifier id) {
    return id.getSource().map(s -> {
      if (s instanceof MethodSource m) {
        return simple(m.getClassName()) + "." + m.getMethodName();
      }
      if (s instanceof ClassSource c) {
        return simple(c.getClassName());
      }
      return id.getDisplayName();
    }).orElse(id.getDisplayName());
  }

  private static String simple(String className) {
    return className.substring(className.lastIndexOf('.') + 1);
  }
}
