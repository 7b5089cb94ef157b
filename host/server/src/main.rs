fn main() -> std::process::ExitCode {
    outreach::memory::limit_arenas();
    outreach::cli::main()
}
