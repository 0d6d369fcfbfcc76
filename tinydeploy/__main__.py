from tinydeploy.cli import main

raise SystemExit(main())
