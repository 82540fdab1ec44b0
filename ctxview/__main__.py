from ctxview.cli.commands import main

raise SystemExit(main())
