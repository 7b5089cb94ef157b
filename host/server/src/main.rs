fn main() -> std::process::ExitCode {
    outreach::cli::main()
}
