/**
 * A recording of the desktop: ffmpeg's x11grab writing H.264 from before the first step, stopped
 * with SIGINT after the last (no -t), then remuxed with +faststart so the moov atom comes first.
 */
import { RunningProgram } from "./child_process.ts";

const FIRST_FRAME_TIMEOUT_MS = 10_000;

/** A capture in progress. */
export class Recording {
  private constructor(private readonly program: RunningProgram, private readonly tape: string) {}

  /** Starts ffmpeg on `display` writing to `tape`; resolves once the first frame is encoded. */
  static async start(
    display: string,
    options: { width: number; height: number; tape: string },
  ): Promise<Recording> {
    const program = RunningProgram.start({
      name: "ffmpeg",
      command: "ffmpeg",
      args: [
        "-hide_banner",
        "-loglevel",
        "error",
        "-nostdin",
        "-f",
        "x11grab",
        "-framerate",
        "15",
        "-video_size",
        `${options.width}x${options.height}`,
        "-i",
        `${display}.0`,
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        "-progress",
        "pipe:1",
        "-stats_period",
        "0.05",
        "-y",
        options.tape,
      ],
      readStdout: true,
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), FIRST_FRAME_TIMEOUT_MS);
    });
    const first = await Promise.race([
      program.waitForLine((line) => /^frame=[1-9]/.test(line)),
      late,
    ]);
    clearTimeout(timer);
    if (first === undefined) {
      await program.stop();
      await Deno.remove(options.tape).catch(() => {});
      throw new Error("ffmpeg x11grab produced no frame");
    }
    return new Recording(program, options.tape);
  }

  /** Stops the capture with SIGINT and writes a +faststart MP4 to `output`; removes the tape. */
  async finish(output: string): Promise<void> {
    this.program.signal("SIGINT");
    await this.program.exited;
    try {
      const remux = await new Deno.Command("ffmpeg", {
        args: [
          "-hide_banner",
          "-loglevel",
          "error",
          "-nostdin",
          "-y",
          "-i",
          this.tape,
          "-c",
          "copy",
          "-movflags",
          "+faststart",
          output,
        ],
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).output();
      if (!remux.success) {
        const reason = new TextDecoder().decode(remux.stderr).trim().split("\n").pop();
        throw new Error(`ffmpeg could not remux the recording: ${reason}`);
      }
    } finally {
      await Deno.remove(this.tape).catch(() => {});
    }
  }

  /** Stops the capture and throws the tape away. */
  async abandon(): Promise<void> {
    await this.program.stop();
    await Deno.remove(this.tape).catch(() => {});
  }
}
