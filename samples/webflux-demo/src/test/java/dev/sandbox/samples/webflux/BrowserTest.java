package dev.sandbox.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.WindowType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The page in a real browser: Debian's headless Chromium, driven by Selenium through Debian's chromedriver, against
 * the application on a random loopback port. It types a command, clicks Run, watches the lines arrive and the exit
 * code, and keeps screenshots in {@code target/screenshots}.
 *
 * <p>With {@code CI=true} a missing browser fails the test; elsewhere the test is skipped with a message.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class BrowserTest {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static Path profile;
    private static ChromeDriverService service;
    private static WebDriver browser;

    @LocalServerPort
    int port;

    @TempDir
    Path dir;

    @BeforeAll
    static void startBrowser() throws IOException {
        boolean installed = Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER);
        if (!installed) {
            String missing = "Debian's chromium and chromium-driver are not installed (" + CHROMIUM + ", "
                    + CHROMEDRIVER + "): apt-get install chromium chromium-driver";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                Assertions.fail("CI=true and the browser test must run, but " + missing);
            }
            Assumptions.abort("skipping the browser test: " + missing);
        }
        profile = Files.createTempDirectory("webflux-demo-chromium-");
        ChromeOptions options = new ChromeOptions();
        // both paths are given, so Selenium Manager has nothing to look up or download (and SE_OFFLINE is set)
        options.setBinary(CHROMIUM.toFile());
        options.addArguments(
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--window-size=1100,760",
                "--user-data-dir=" + profile);
        service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort()
                .build();
        browser = new ChromeDriver(service, options);
    }

    @AfterAll
    static void stopBrowser() throws IOException {
        if (browser != null) {
            browser.quit();
        }
        if (service != null) {
            service.stop();
        }
        if (profile != null) {
            try (Stream<Path> files = Files.walk(profile)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    @BeforeEach
    void openPage() {
        browser.get("http://127.0.0.1:" + port + "/");
        new WebDriverWait(browser, WAIT).until(d -> d.findElement(By.id("run")).isEnabled());
    }

    private void run(String command) {
        WebElement input = browser.findElement(By.id("command"));
        input.clear();
        input.sendKeys(command);
        browser.findElement(By.id("run")).click();
    }

    private List<String> lines(String stream) {
        return browser.findElements(By.cssSelector("#output ." + stream)).stream()
                .map(WebElement::getText)
                .toList();
    }

    private String status() {
        return browser.findElement(By.id("status")).getText();
    }

    private void awaitLine(String stream, String text) {
        new WebDriverWait(browser, WAIT)
                .withMessage(() -> stream + " line '" + text + "' on the page; it shows " + lines("stdout") + " "
                        + lines("stderr") + ", status '" + status() + "'")
                .until(d -> lines(stream).contains(text));
    }

    private static void screenshot(WebDriver browser, String name) throws IOException {
        Path dir = Path.of(System.getProperty("screenshot.dir", "target/screenshots"));
        Files.createDirectories(dir);
        Path shot = ((ChromeDriver) browser).getScreenshotAs(OutputType.FILE).toPath();
        Files.copy(shot, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
        Files.delete(shot);
    }

    @Test
    void run_streams_stdout_and_stderr_while_the_command_runs_then_shows_the_exit_code() throws IOException {
        Path go = dir.resolve("go");
        run("echo compiling; echo 'warning: unused variable' >&2; echo waiting for go; "
                + "while [ ! -e " + go + " ]; do sleep 0.05; done; "
                + "echo tests passed; echo 'error: 1 file not formatted' >&2; exit 7");

        // the page says what the default provider gives: nothing between the command and this machine
        new WebDriverWait(browser, WAIT)
                .withMessage(() -> "the isolation on the page")
                .until(d -> d.findElement(By.id("isolation")).getText().equals("local processes: no isolation"));
        assertThat(browser.findElement(By.id("isolation")).getAttribute("class"))
                .isEqualTo("none");

        // the command is blocked on a file the test has not made yet: whatever shows now arrived live
        awaitLine("stdout", "waiting for go");
        awaitLine("stderr", "warning: unused variable");
        assertThat(status()).startsWith("running");
        screenshot(browser, "webflux-demo-running.png");

        Files.createFile(go);
        new WebDriverWait(browser, WAIT)
                .withMessage(() -> "the exit code; status is '" + status() + "'")
                .until(d -> status().startsWith("exit 7"));

        assertThat(lines("stdout")).containsExactly("compiling", "waiting for go", "tests passed");
        assertThat(lines("stderr")).containsExactly("warning: unused variable", "error: 1 file not formatted");
        WebElement out = browser.findElement(By.cssSelector("#output .stdout"));
        WebElement err = browser.findElement(By.cssSelector("#output .stderr"));
        assertThat(err.getCssValue("color")).as("stderr is styled apart").isNotEqualTo(out.getCssValue("color"));
        assertThat(browser.findElement(By.id("status")).getAttribute("class")).isEqualTo("fail");
        screenshot(browser, "webflux-demo.png");
    }

    @Test
    void stop_kills_the_command() throws Exception {
        Path pidFile = dir.resolve("pid");
        run("echo $$ > " + pidFile + "; echo started; sleep 60");
        awaitLine("stdout", "started");
        long pid = Processes.readPid(pidFile, WAIT);

        browser.findElement(By.id("stop")).click();
        assertThat(Processes.awaitGone(pid, Duration.ofSeconds(1)))
                .as("Stop kills the shell %d within 1 s", pid)
                .isTrue();
        new WebDriverWait(browser, WAIT).until(d -> status().startsWith("stopped"));
    }

    @Test
    void leaving_the_page_kills_the_command() throws Exception {
        Path pidFile = dir.resolve("pid");
        run("echo $$ > " + pidFile + "; echo started; sleep 60");
        awaitLine("stdout", "started");
        long pid = Processes.readPid(pidFile, WAIT);

        browser.get("about:blank");
        assertThat(Processes.awaitGone(pid, Duration.ofSeconds(1)))
                .as("leaving the page kills the shell %d within 1 s", pid)
                .isTrue();
    }

    @Test
    void closing_the_tab_kills_the_command() throws Exception {
        String first = browser.getWindowHandle();
        browser.switchTo().newWindow(WindowType.TAB);
        try {
            openPage();
            Path pidFile = dir.resolve("pid");
            run("echo $$ > " + pidFile + "; echo started; sleep 60");
            awaitLine("stdout", "started");
            long pid = Processes.readPid(pidFile, WAIT);

            browser.close();
            assertThat(Processes.awaitGone(pid, Duration.ofSeconds(1)))
                    .as("closing the tab kills the shell %d within 1 s", pid)
                    .isTrue();
        } finally {
            browser.switchTo().window(first);
        }
    }
}
