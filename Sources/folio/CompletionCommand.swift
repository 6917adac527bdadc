import Folio

struct CompletionCommand: Command {
  static let name = "completion"
  static let abstract = "Print a shell's completion script (bash, zsh or fish)."
  static let usage = "folio completion bash|zsh|fish"
  static let details = """
    ARGUMENTS:
      SHELL    bash, zsh or fish.

    The script completes command names, each command's options, table names and document
    keys (from the store in the current folder, or -C DIR's), asking 'folio' itself, so it
    never goes stale as folio changes. scripts/install.sh installs all three. By hand:
      bash:  folio completion bash > ~/.local/share/bash-completion/completions/folio
      zsh:   folio completion zsh > "${fpath[1]}/_folio"
      fish:  folio completion fish > ~/.config/fish/completions/folio.fish
    """

  var shell: String

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments)
    try parsed.expectPositionals(1...1)
    shell = parsed.positionals[0]
    guard Self.scripts[shell] != nil else {
      throw UsageError("no completion for '\(shell)'; pick bash, zsh or fish")
    }
  }

  func run(in context: CommandContext) throws -> Int32 {
    Output.print(Self.scripts[shell]!, terminator: "")
    return 0
  }

  /// Each script asks `folio __complete INDEX WORDS…` (see ``Completion``).
  static let scripts: [String: String] = [
    "bash": """
    # bash completion for folio (folio completion bash)
    _folio() {
      local IFS=$'\\n'
      local candidates
      candidates=$(folio __complete "$COMP_CWORD" "${COMP_WORDS[@]}" 2>/dev/null)
      COMPREPLY=($(compgen -W "$candidates" -- "${COMP_WORDS[COMP_CWORD]}"))
    }
    complete -o default -F _folio folio

    """,
    "zsh": """
    #compdef folio
    # zsh completion for folio (folio completion zsh)
    _folio() {
      local -a candidates
      candidates=("${(@f)$(folio __complete $((CURRENT - 1)) "${words[@]}" 2>/dev/null)}")
      if (( ${#candidates} )) && [[ -n "${candidates[1]}" ]]; then
        compadd -a candidates
      else
        _files
      fi
    }
    if [[ "${zsh_eval_context[-1]}" == loadautofunc ]]; then
      _folio "$@"
    else
      compdef _folio folio
    fi

    """,
    "fish": """
    # fish completion for folio (folio completion fish)
    function __folio_complete
        set -l tokens (commandline -opc)
        folio __complete (count $tokens) $tokens (commandline -ct) 2>/dev/null
    end
    complete -c folio -a '(__folio_complete)'

    """,
  ]
}
