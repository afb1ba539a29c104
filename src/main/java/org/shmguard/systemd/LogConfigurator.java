package org.shmguard.systemd;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * shmguard's logging, set up in code when logback starts (found through the
 * {@code META-INF/services} entry): each line to standard error as {@code %lineStart%msg%n}, that
 * is {@link JournalStreamConverter}'s start (a journald priority under systemd, the time and level
 * elsewhere), the message, and a logged exception's stack after it; INFO by default, Quartz's own
 * lines from WARN. No XML is parsed at start. An operator's own file given with
 * {@code -Dlogback.configurationFile} still takes over: then this configurator steps aside.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_HIGH_PRIORITY)
public final class LogConfigurator extends ContextAwareBase implements Configurator {
  @Override
  public ExecutionStatus configure(LoggerContext context) {
    if (System.getProperty("logback.configurationFile") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    LineLayout layout = new LineLayout();
    layout.setContext(context);
    layout.start();
    LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
    encoder.setContext(context);
    encoder.setLayout(layout);
    encoder.start();
    ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
    stderr.setContext(context);
    stderr.setName("STDERR");
    stderr.setTarget("System.err");
    stderr.setEncoder(encoder);
    stderr.start();
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.INFO);
    root.addAppender(stderr);
    context.getLogger("org.quartz").setLevel(Level.WARN);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /** {@code %lineStart%msg%n}, and the stack of a logged exception after it. */
  static final class LineLayout extends LayoutBase<ILoggingEvent> {
    private final JournalStreamConverter lineStart = new JournalStreamConverter();

    @Override
    public String doLayout(ILoggingEvent e) {
      StringBuilder sb = new StringBuilder(128).append(lineStart.convert(e)).append(e.getFormattedMessage())
          .append(CoreConstants.LINE_SEPARATOR);
      IThrowableProxy thrown = e.getThrowableProxy();
      if (thrown != null) {
        sb.append(ThrowableProxyUtil.asString(thrown)).append(CoreConstants.LINE_SEPARATOR);
      }
      return sb.toString();
    }
  }
}
