package dev.sandbox.implementation.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecEvent;
import dev.sandbox.implementation.process.RawEvent;
import dev.sandbox.implementation.wire.LineBatch;
import dev.sandbox.implementation.wire.StreamFrames;
import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Batched framing yields exactly the events of plain framing, whatever the output and however it is cut. */
class LineFramerBatchesTest {
    private static final ExecEvent.Exit EXIT = new ExecEvent.Exit(0, ExecEvent.Termination.EXITED, Duration.ZERO);

    private static List<RawEvent> chunks(byte[] out, byte[] err, Random random) {
        List<RawEvent> raw = new ArrayList<>();
        int o = 0;
        int e = 0;
        while (o < out.length || e < err.length) {
            boolean stdout = e >= err.length || (o < out.length && random.nextBoolean());
            byte[] src = stdout ? out : err;
            int at = stdout ? o : e;
            int n = Math.min(src.length - at, 1 + random.nextInt(random.nextBoolean() ? 7 : 70_000));
            byte[] chunk = new byte[n];
            System.arraycopy(src, at, chunk, 0, n);
            raw.add(new RawEvent.Chunk(stdout ? RawEvent.STDOUT : RawEvent.STDERR, chunk));
            if (stdout) {
                o += n;
            } else {
                e += n;
            }
        }
        raw.add(new RawEvent.Exited(0, false));
        return raw;
    }

    private static List<ExecEvent> plain(List<RawEvent> raw, int maxLine, Charset charset) {
        LineFramer f = new LineFramer(maxLine, charset, x -> EXIT);
        List<ExecEvent> out = new ArrayList<>();
        raw.forEach(r -> f.frame(r).forEach(out::add));
        return out;
    }

    private static List<ExecEvent> batched(List<RawEvent> raw, int maxLine, Charset charset, int[] batches) {
        LineFramer f = new LineFramer(maxLine, charset, x -> EXIT);
        List<ExecEvent> out = new ArrayList<>();
        for (RawEvent r : raw) {
            for (Framed<LineBatch> item : f.frameBatches(r, LineBatch.RUNS)) {
                switch (item) {
                    case Framed.Run<LineBatch>(LineBatch b) -> {
                        batches[0]++;
                        byte[] json = b.frame(-1);
                        StreamFrames.StreamItem read = StreamFrames.streamItem(json, 0, json.length);
                        out.addAll(((StreamFrames.LinesItem) read).lines());
                    }
                    case Framed.Event<LineBatch>(ExecEvent event) -> out.add(event);
                }
            }
        }
        return out;
    }

    private static byte[] output(Random random, int lines) {
        String[] pieces = {
            "",
            "plain",
            "x",
            "tab\t",
            "cr\r",
            "\r",
            "quote\"",
            "back\\slash",
            "é",
            "€",
            "𝄞",
            "\u0001",
            "long".repeat(300)
        };
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < lines; i++) {
            int parts = random.nextInt(4);
            for (int p = 0; p < parts; p++) {
                out.writeBytes(pieces[random.nextInt(pieces.length)].getBytes(StandardCharsets.UTF_8));
            }
            if (random.nextInt(50) == 0) {
                out.write(0xC3); // a malformed byte
            }
            out.write('\n');
        }
        if (random.nextBoolean()) {
            out.writeBytes("no newline at the end".getBytes(StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }

    @Test
    void batchesHoldTheSameLinesAsEvents() {
        int[] batches = {0};
        for (int seed = 0; seed < 40; seed++) {
            Random random = new Random(seed);
            byte[] out = output(random, 2000);
            byte[] err = output(random, 300);
            int maxLine = random.nextBoolean() ? 64 * 1024 : 100;
            Charset charset = seed % 7 == 6 ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8;
            List<RawEvent> raw = chunks(out, err, random);
            assertThat(batched(raw, maxLine, charset, batches))
                    .as("seed %d", seed)
                    .isEqualTo(plain(raw, maxLine, charset));
        }
        assertThat(batches[0]).isGreaterThan(100);
    }

    @Test
    void seqOutputComesInFewBatches() {
        StringBuilder sb = new StringBuilder();
        for (int i = 1; i <= 100_000; i++) {
            sb.append(i).append('\n');
        }
        byte[] out = sb.toString().getBytes(StandardCharsets.US_ASCII);
        List<RawEvent> raw = new ArrayList<>();
        for (int at = 0; at < out.length; at += 65_536) {
            byte[] chunk = new byte[Math.min(65_536, out.length - at)];
            System.arraycopy(out, at, chunk, 0, chunk.length);
            raw.add(new RawEvent.Chunk(RawEvent.STDOUT, chunk));
        }
        raw.add(new RawEvent.Exited(0, false));
        int[] batches = {0};
        assertThat(batched(raw, 64 * 1024, StandardCharsets.UTF_8, batches))
                .isEqualTo(plain(raw, 64 * 1024, StandardCharsets.UTF_8));
        assertThat(batches[0]).isLessThan(out.length / LineBatch.MAX_TEXT_BYTES + 2 * raw.size());
    }
}
