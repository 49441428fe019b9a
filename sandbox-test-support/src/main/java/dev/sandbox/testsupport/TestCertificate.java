package dev.sandbox.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate made for a test by the JDK's {@code keytool}, run as a real process, and written as the
 * PEM files a user would give a server: the certificate ({@code BEGIN CERTIFICATE}) and its private key, unencrypted
 * PKCS#8 ({@code BEGIN PRIVATE KEY}).
 *
 * @param certificate the certificate's PEM file
 * @param privateKey the private key's PEM file
 */
public record TestCertificate(Path certificate, Path privateKey) {
    private static final char[] STORE_PASSWORD = "test-store-password".toCharArray();

    /**
     * Makes a certificate for {@code CN=localhost}, valid for the names and addresses in {@code subjectAltNames}.
     *
     * @param dir the directory to write the files to (a keystore, {@code NAME.pem} and {@code NAME-key.pem})
     * @param name the files' base name
     * @param subjectAltNames keytool's SAN list, such as {@code ip:127.0.0.1,dns:localhost}
     * @return the PEM files
     * @throws IOException when keytool fails or a file cannot be written
     * @throws InterruptedException when interrupted while keytool runs
     */
    public static TestCertificate make(Path dir, String name, String subjectAltNames)
            throws IOException, InterruptedException {
        Path store = dir.resolve(name + ".p12");
        Path cert = dir.resolve(name + ".pem");
        Path key = dir.resolve(name + "-key.pem");
        String keytool =
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        String password = new String(STORE_PASSWORD);
        keytool(
                dir,
                List.of(
                        keytool,
                        "-genkeypair",
                        "-alias",
                        "server",
                        "-keyalg",
                        "EC",
                        "-groupname",
                        "secp256r1",
                        "-dname",
                        "CN=localhost",
                        "-ext",
                        "san=" + subjectAltNames,
                        "-validity",
                        "2",
                        "-storetype",
                        "PKCS12",
                        "-keystore",
                        store.toString(),
                        "-storepass",
                        password));
        keytool(
                dir,
                List.of(
                        keytool,
                        "-exportcert",
                        "-rfc",
                        "-alias",
                        "server",
                        "-keystore",
                        store.toString(),
                        "-storepass",
                        password,
                        "-file",
                        cert.toString()));
        try (InputStream in = Files.newInputStream(store)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, STORE_PASSWORD);
            PrivateKey pk = (PrivateKey) ks.getKey("server", STORE_PASSWORD);
            String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                    .encodeToString(pk.getEncoded());
            Files.writeString(key, "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n");
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot read the key keytool made: " + e.getMessage(), e);
        }
        return new TestCertificate(cert, key);
    }

    private static void keytool(Path dir, List<String> command) throws IOException, InterruptedException {
        Path log = Files.createTempFile(dir, "keytool", ".log");
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("keytool did not finish within 60 seconds: " + command);
        }
        if (p.exitValue() != 0) {
            throw new IOException("keytool exited " + p.exitValue() + ": " + Files.readString(log));
        }
    }
}
