package org.shmguard.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.LoggingEvent;
import org.junit.jupiter.api.Test;

class LogConfiguratorTest {
  @Test
  void logbackFindsTheConfiguratorAndLogsInfoToStderrWithQuartzFromWarn() {
    LoggerContext context = (LoggerContext) org.slf4j.LoggerFactory.getILoggerFactory();
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);

    assertThat(root.getAppender("STDERR")).as("configured by LogConfigurator, not by an XML file").isNotNull();
    assertThat(context.getLogger("org.quartz").getLevel()).isEqualTo(Level.WARN);
    assertThat(getClass().getResource("/logback.xml")).as("no XML configuration to parse at start").isNull();
  }

  @Test
  void aFreshContextGetsTheSameSetUp() {
    LoggerContext context = new LoggerContext();
    LogConfigurator c = new LogConfigurator();
    c.setContext(context);

    assertThat(c.configure(context)).isEqualTo(Configurator.ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY);
    assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getLevel()).isEqualTo(Level.INFO);
    assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("STDERR").isStarted()).isTrue();
  }

  @Test
  void aLineIsItsStartTheMessageAndALoggedExceptionsStack() {
    LoggerContext context = new LoggerContext();
    LogConfigurator.LineLayout layout = new LogConfigurator.LineLayout();
    layout.setContext(context);
    layout.start();
    Logger logger = context.getLogger("t");

    String plain = layout.doLayout(new LoggingEvent("t", logger, Level.WARN, "reaped {}", null, new Object[] {"nccl-1"}));
    String thrown = layout.doLayout(new LoggingEvent("t", logger, Level.ERROR, "failed", new IllegalStateException("boom"), null));

    assertThat(plain).matches("(<4>|\\S+ WARN  )reaped nccl-1\n");
    assertThat(thrown).contains("failed\n").contains("java.lang.IllegalStateException: boom").contains("\tat ");
  }
}
