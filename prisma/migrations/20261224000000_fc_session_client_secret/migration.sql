-- The last client secret a session was given, sealed: versions before 2025-11-17.clover show it on
-- a finished session too. Sessions made before this keep none (they show null).
ALTER TABLE "financial_connections_sessions" ADD COLUMN "client_secret" TEXT;
